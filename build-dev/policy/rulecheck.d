build-dev/policy/rulecheck.o: policy/rulecheck.c policy/../util/glob.h \
 policy/../util/util.h policy/policy.h policy/../manifest/manifest.h \
 policy/../manifest/../util/util.h policy/../util/path.h \
 policy/rulecheck.h
policy/../util/glob.h:
policy/../util/util.h:
policy/policy.h:
policy/../manifest/manifest.h:
policy/../manifest/../util/util.h:
policy/../util/path.h:
policy/rulecheck.h:

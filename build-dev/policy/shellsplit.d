build-dev/policy/shellsplit.o: policy/shellsplit.c policy/../util/glob.h \
 policy/../util/util.h policy/danger.h policy/policy.h \
 policy/../manifest/manifest.h policy/../manifest/../util/util.h \
 policy/../util/path.h policy/shellsplit.h
policy/../util/glob.h:
policy/../util/util.h:
policy/danger.h:
policy/policy.h:
policy/../manifest/manifest.h:
policy/../manifest/../util/util.h:
policy/../util/path.h:
policy/shellsplit.h:

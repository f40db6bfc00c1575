build-dev/policy/policy.o: policy/policy.c policy/../util/glob.h \
 policy/../util/util.h policy/../util/path.h policy/../manifest/preset.h \
 policy/danger.h policy/policy.h policy/../manifest/manifest.h \
 policy/../manifest/../util/util.h policy/shellsplit.h \
 policy/../util/util.h
policy/../util/glob.h:
policy/../util/util.h:
policy/../util/path.h:
policy/../manifest/preset.h:
policy/danger.h:
policy/policy.h:
policy/../manifest/manifest.h:
policy/../manifest/../util/util.h:
policy/shellsplit.h:
policy/../util/util.h:

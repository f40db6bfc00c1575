build-dev/policy/decide.o: policy/decide.c policy/decide.h \
 policy/policy.h policy/../manifest/manifest.h \
 policy/../manifest/../util/util.h policy/../util/path.h policy/protect.h
policy/decide.h:
policy/policy.h:
policy/../manifest/manifest.h:
policy/../manifest/../util/util.h:
policy/../util/path.h:
policy/protect.h:

build-dev/policy/protect.o: policy/protect.c policy/../util/glob.h \
 policy/../util/util.h policy/gitmeta.h policy/../util/util.h \
 policy/protect.h policy/../manifest/manifest.h \
 policy/../manifest/../util/util.h
policy/../util/glob.h:
policy/../util/util.h:
policy/gitmeta.h:
policy/../util/util.h:
policy/protect.h:
policy/../manifest/manifest.h:
policy/../manifest/../util/util.h:

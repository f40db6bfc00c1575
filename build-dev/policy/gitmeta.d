build-dev/policy/gitmeta.o: policy/gitmeta.c policy/../util/beneath.h \
 policy/../util/path.h policy/gitmeta.h policy/../util/util.h
policy/../util/beneath.h:
policy/../util/path.h:
policy/gitmeta.h:
policy/../util/util.h:

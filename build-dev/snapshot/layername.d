build-dev/snapshot/layername.o: snapshot/layername.c \
 snapshot/../util/util.h snapshot/layername.h
snapshot/../util/util.h:
snapshot/layername.h:

build-dev/sandbox/cgroup.o: sandbox/cgroup.c sandbox/../util/util.h \
 sandbox/cgroup.h
sandbox/../util/util.h:
sandbox/cgroup.h:

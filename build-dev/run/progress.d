build-dev/run/progress.o: run/progress.c run/progress.h \
 run/../util/util.h
run/progress.h:
run/../util/util.h:

build-dev/run/ignored.o: run/ignored.c run/ignored.h run/../util/util.h
run/ignored.h:
run/../util/util.h:

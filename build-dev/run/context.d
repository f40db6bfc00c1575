build-dev/run/context.o: run/context.c run/context.h
run/context.h:

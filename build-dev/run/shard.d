build-dev/run/shard.o: run/shard.c run/shard.h run/../manifest/manifest.h \
 run/../manifest/../util/util.h
run/shard.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:

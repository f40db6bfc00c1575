build-dev/manifest/preset.o: manifest/preset.c manifest/preset.h
manifest/preset.h:

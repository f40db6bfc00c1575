build-dev/net/pump.o: net/pump.c net/pump.h
net/pump.h:

build-dev/net/httphead.o: net/httphead.c net/httphead.h
net/httphead.h:

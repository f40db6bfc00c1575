build-dev/gen/recipes.o: build-dev/gen/recipes.c cmd/recipes.h
cmd/recipes.h:

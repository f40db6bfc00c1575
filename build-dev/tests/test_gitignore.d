build-dev/tests/test_gitignore: tests/unit/test_gitignore.c \
 tests/unit/t.h tests/unit/../../util/gitignore.h
tests/unit/t.h:
tests/unit/../../util/gitignore.h:

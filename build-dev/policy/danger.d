build-dev/policy/danger.o: policy/danger.c policy/danger.h \
 policy/shellsplit.h
policy/danger.h:
policy/shellsplit.h:

/* filter: the seccomp filter a sandboxed step runs under; built once per sandbox, loaded last before exec. */
#ifndef NS_FILTER_H
#define NS_FILTER_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "../util/util.h"

struct sock_filter;

struct filter {
	struct sock_filter *prog; /* classic BPF, owned */
	size_t len;               /* instructions */
};

/* Build the deny list (ptrace, mount, namespaces, keyring, bpf, io_uring, TIOCSTI ...);
   with network 0 every socket family but AF_UNIX is refused too. */
int filterbuild(struct filter *f, int network, struct err *e);
/* Install f in the calling process; no_new_privs must be set. Async-signal-safe; -1 with errno. */
int filterload(const struct filter *f);
/* The same rules as a container engine's seccomp profile (the JSON docker run --security-opt
   seccomp=FILE reads): the native ABI only, the engine kills a call from another. A new object. */
cJSON *filterprofile(int network);
/* Free the program. */
void filterfree(struct filter *f);

#endif

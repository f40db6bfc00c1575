/* cgroup: memory, pids and cpu limits for a sandbox's steps, on cgroup v2 or v1, best effort. */
#ifndef NS_CGROUP_H
#define NS_CGROUP_H

#include <stdint.h>

enum { CG_MEMORY = 1, CG_PIDS = 2, CG_CPU = 4 };

struct cgroup {
	int version;       /* 2 unified, 1 legacy or hybrid (v1 controllers), 0 none used */
	char *dir[3];      /* directories made: v2 uses dir[0], v1 one per controller; owned */
	int procs[3];      /* their cgroup.procs open for writing, -1 when unused */
	int parent[3];     /* the folders holding dir[], to remove them from anywhere; -1 when unused */
	char *oomfile;     /* memory.events (v2) or memory.oom_control (v1), or NULL */
	unsigned enforced; /* CG_ bits whose limit is in force */
	char note[96];     /* e.g. "cgroup2 memory pids cpu", or why no cgroup was used */
};

/* Make a cgroup with these limits (0 = none). Never fails: whatever could not be set
   up is missing from enforced, and note says why. */
void cgroupopen(struct cgroup *cg, int64_t memory, double cpus, int64_t pids);
/* Move process pid (0: the caller) into the cgroup. Async-signal-safe; -1 with errno. */
int cgroupmove(const struct cgroup *cg, int pid);
/* OOM kills in the cgroup so far, or -1 when unknown. */
int64_t cgroupooms(const struct cgroup *cg);
/* Remove the (by now empty) directories, retrying while the last processes exit; works
   from any mount namespace, as it goes through descriptors opened at cgroupopen. */
void cgroupremove(const struct cgroup *cg);
/* Close the descriptors and free, leaving the directories (to someone's cgroupremove). */
void cgroupforget(struct cgroup *cg);
/* cgroupremove, then cgroupforget. */
void cgroupclose(struct cgroup *cg);

#endif

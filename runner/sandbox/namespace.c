/* namespace: backend not built yet. */
#include "sandbox.h"

static int bopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	(void)s;
	(void)c;
	return errc(e, 2, "sandbox backend 'namespace' is not implemented yet");
}

static int bexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	(void)s;
	(void)command;
	(void)r;
	return errf(e, "not implemented");
}

static void bclose(struct sbx *s)
{
	(void)s;
}

const struct sbxops sbxnamespace = {"namespace", bopen, bexec, bclose};

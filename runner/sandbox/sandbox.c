/* sandbox: pick the backend a step's configuration names. */
#include <stdlib.h>
#include "sandbox.h"

int sbxopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	const struct sbxops *ops;
	switch (c->conf->backend) {
	case BACKEND_NAMESPACE: ops = &sbxnamespace; break;
	case BACKEND_DOCKER: ops = &sbxdocker; break;
	case BACKEND_NONE: ops = &sbxnone; break;
	default: return errf(e, "unknown sandbox backend");
	}
	*s = NULL;
	if (ops->open(s, c, e) < 0)
		return -1;
	(*s)->ops = ops;
	return 0;
}

int sbxexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	return s->ops->exec(s, command, r, e);
}

void sbxclose(struct sbx *s)
{
	if (s)
		s->ops->close(s);
}


/* netrule: allowlist entries. A name is lowercase letters, digits, '-' and '.', as DNS has
   them; "*." before a name admits every name below it; an IP literal ("[v6]" where a port
   follows) or CIDR names addresses; ":port" narrows the entry to one port, else it admits
   443 and 80. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "netrule.h"

static int validname(const char *s)
{
	size_t len = strlen(s), label = 0;
	if (len == 0 || len > 253 || s[0] == '.' || s[0] == '-' || s[len - 1] == '-' || s[len - 1] == '.')
		return 0;
	for (const char *c = s; *c; c++) {
		if (*c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-' || *c == '_'))
			return 0;
		if (++label > 63)
			return 0;
	}
	return 1;
}

/* An address with an optional /prefix into r; 0, or -1 when it is none. */
static int parseaddr(const char *s, struct netrule *r, const char **why)
{
	char tmp[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	if (n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	if (inet_pton(AF_INET, tmp, r->addr) == 1)
		r->family = AF_INET;
	else if (inet_pton(AF_INET6, tmp, r->addr) == 1)
		r->family = AF_INET6;
	else
		return -1;
	int max = r->family == AF_INET ? 32 : 128;
	r->prefix = max;
	if (slash) {
		char *end;
		long p = strtol(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || p < 0 || p > max) {
			*why = "the prefix length of a CIDR must be 0 to 32 (IPv4) or 0 to 128 (IPv6)";
			return -2;
		}
		r->prefix = (int)p;
		/* The bits past the prefix must be zero: 10.0.0.1/8 is more likely a slip than meant. */
		for (int bit = r->prefix; bit < max; bit++)
			if (r->addr[bit / 8] & (0x80 >> (bit % 8))) {
				*why = "a CIDR's address has bits set past its prefix length (write the network address, "
				       "e.g. 10.0.0.0/8)";
				return -2;
			}
	}
	return 0;
}

int netruleparse(const char *text, struct netrule *r, const char **why)
{
	char buf[300];
	const char *port = NULL;
	memset(r, 0, sizeof *r);
	*why = "";
	size_t len = strlen(text);
	if (len == 0 || len >= sizeof buf) {
		*why = len ? "the entry is too long" : "the entry is empty";
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)tolower((unsigned char)text[i]);
	buf[len] = 0;
	char *host = buf;
	if (buf[0] == '[') { /* [v6] or [v6]:port */
		char *close = strchr(buf, ']');
		if (!close || (close[1] && close[1] != ':')) {
			*why = "an IPv6 address in brackets is [ADDRESS] or [ADDRESS]:PORT";
			return -1;
		}
		*close = 0;
		host = buf + 1;
		if (close[1] == ':')
			port = close + 2;
	} else {
		char *colon = strchr(buf, ':');
		if (colon && !strchr(colon + 1, ':')) { /* one colon: host:port; more: a bare IPv6 address */
			*colon = 0;
			port = colon + 1;
		}
	}
	if (port) {
		char *end;
		long p = strtol(port, &end, 10);
		if (!isdigit((unsigned char)*port) || *end || p < 1 || p > 65535) {
			*why = "the port must be a number from 1 to 65535";
			return -1;
		}
		r->port = (int)p;
	}
	int a = parseaddr(host, r, why);
	if (a == -2)
		return -1;
	if (a < 0) {
		if (strchr(host, '/') || strchr(host, ':')) {
			*why = "not an IP address or CIDR (e.g. 10.0.0.0/8, fd00::/8, [::1]:8080)";
			return -1;
		}
		if (host[0] == '*') {
			if (host[1] != '.') {
				*why = "a wildcard is only '*.' before a domain, e.g. *.pypi.org";
				return -1;
			}
			r->wildcard = 1;
			host += 2;
		}
		if (strchr(host, '*')) {
			*why = "a wildcard is only '*.' before a domain, e.g. *.pypi.org";
			return -1;
		}
		if (!validname(host)) {
			*why = "not a host name (letters, digits, '-' and '.'), *.domain, IP address or CIDR";
			return -1;
		}
		if (r->wildcard && !strchr(host, '.')) {
			*why = "a wildcard needs a domain with a dot below it (*.example.com, not *.com)";
			return -1;
		}
		r->host = strdup(host);
	}
	r->text = strdup(text);
	if (!r->text || (a < 0 && !r->host)) {
		netrulefree(r);
		*why = "out of memory";
		return -1;
	}
	return 0;
}

void netrulecopy(struct netrule *dst, const struct netrule *src)
{
	*dst = *src;
	dst->text = src->text ? xstrdup(src->text) : NULL;
	dst->host = src->host ? xstrdup(src->host) : NULL;
}

void netrulefree(struct netrule *r)
{
	free(r->text);
	free(r->host);
	memset(r, 0, sizeof *r);
}

int netruleport(const struct netrule *r, int port)
{
	return r->port ? r->port == port : port == 443 || port == 80;
}

int netrulename(const struct netrule *r, const char *host)
{
	if (!r->host)
		return 0;
	if (!r->wildcard)
		return strcmp(r->host, host) == 0;
	size_t hl = strlen(host), dl = strlen(r->host);
	return hl > dl + 1 && host[hl - dl - 1] == '.' && strcmp(host + hl - dl, r->host) == 0;
}

int netruleaddr(const struct netrule *r, int family, const unsigned char *addr)
{
	if (!r->family || r->family != family)
		return 0;
	int full = r->prefix / 8, rest = r->prefix % 8;
	if (memcmp(r->addr, addr, full) != 0)
		return 0;
	if (rest) {
		unsigned char mask = (unsigned char)(0xff << (8 - rest));
		if ((r->addr[full] & mask) != (addr[full] & mask))
			return 0;
	}
	return 1;
}

int netrulewithin(const struct netrule *r, const struct netrule *outer)
{
	int portok = outer->port ? r->port == outer->port : !r->port || r->port == 443 || r->port == 80;
	if (!portok)
		return 0;
	if (outer->host) /* a name: the same name (not a wildcard), or a name or *.name below its *.domain */
		return r->host && (outer->wildcard ? netrulename(outer, r->host)
		                                   : !r->wildcard && strcmp(r->host, outer->host) == 0);
	return r->family == outer->family && r->prefix >= outer->prefix && netruleaddr(outer, r->family, r->addr);
}

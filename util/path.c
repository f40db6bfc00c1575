/* path: tool path arguments made workspace-relative, lexically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "path.h"
#include "glob.h"
#include "util.h"

char *wspath(const char *p)
{
	if (!p || !*p)
		return NULL;
	size_t n = strlen(p), i = 0;
	if (n > 4096)
		return NULL;
	for (size_t k = 0; k < n;) {
		uint32_t c;
		int len = u8dec(p + k, n - k, &c);
		if (len < 0)
			return NULL;
		k += (size_t)len;
	}
	if (p[0] == '/') { /* the first name that is not "." must be workspace */
		for (;;) {
			while (p[i] == '/')
				i++;
			if (p[i] == '.' && (p[i + 1] == '/' || !p[i + 1])) {
				i++;
				continue;
			}
			break;
		}
		if (strncmp(p + i, "workspace", 9) != 0 || (p[i + 9] && p[i + 9] != '/'))
			return NULL;
		i += 9;
	}
	while (p[i] == '/')
		i++;
	return pathclean(p + i);
}

char *pathclean(const char *p)
{
	size_t n = strlen(p), o = 0, i = 0;
	char *out = xmalloc(n + 2);
	if (p[0] == '/')
		out[o++] = '/';
	size_t root = o;
	while (p[i]) {
		while (p[i] == '/')
			i++;
		size_t j = i;
		while (p[j] && p[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && p[i] == '.')) {
			/* nothing */
		} else if (len == 2 && p[i] == '.' && p[i + 1] == '.') {
			if (o == root) {
				free(out);
				return NULL;
			}
			while (o > root && out[o - 1] != '/')
				o--;
			if (o > root)
				o--; /* the slash before the dropped name */
		} else {
			if (o > root)
				out[o++] = '/';
			memcpy(out + o, p + i, len);
			o += len;
		}
		i = j;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = 0;
	return out;
}

const char *pathcopyname(const char *rel)
{
	const char *r = rel;
	while (r[0] == '.' && r[1] == '/')
		r += 2;
	if (r[0] == '/' || strstr(r, "..") || !*r)
		r = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	return r;
}

/* sign: SSHSIG (OpenSSH PROTOCOL.sshsig) over Ed25519 through libcrypto. A signature is the
 * Ed25519 signature of "SSHSIG" || string(namespace) || string("") || string(hash name) ||
 * string(hash of the message), wrapped with the public key in an armored blob. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "sign.h"

struct signkey {
	unsigned char seed[32], pk[32];
	struct strv text; /* the file's body, each base64 line of it, the lines joined: masked in a run */
};

static const char keybegin[] = "-----BEGIN OPENSSH PRIVATE KEY-----", keyend[] = "-----END OPENSSH PRIVATE KEY-----";
static const char sigbegin[] = "-----BEGIN SSH SIGNATURE-----", sigend[] = "-----END SSH SIGNATURE-----";

/* --- the SSH wire format: big-endian uint32 and length-prefixed strings --- */

struct rd {
	const unsigned char *p;
	size_t n;
	int bad;
};

static unsigned getu32(struct rd *r)
{
	if (r->bad || r->n < 4) {
		r->bad = 1;
		return 0;
	}
	unsigned v = (unsigned)r->p[0] << 24 | (unsigned)r->p[1] << 16 | (unsigned)r->p[2] << 8 | r->p[3];
	r->p += 4;
	r->n -= 4;
	return v;
}

/* The next string; its bytes in *s (not terminated), its length returned. */
static size_t getstr(struct rd *r, const unsigned char **s)
{
	size_t n = getu32(r);
	if (r->bad || n > r->n) {
		r->bad = 1;
		*s = (const unsigned char *)"";
		return 0;
	}
	*s = r->p;
	r->p += n;
	r->n -= n;
	return n;
}

static int streq(struct rd *r, const char *want)
{
	const unsigned char *s;
	size_t n = getstr(r, &s);
	return !r->bad && n == strlen(want) && memcmp(s, want, n) == 0;
}

static void putu32(struct buf *b, unsigned v)
{
	unsigned char x[4] = {v >> 24, v >> 16, v >> 8, v};
	bufadd(b, x, 4);
}

static void putstr(struct buf *b, const void *s, size_t n)
{
	putu32(b, (unsigned)n);
	bufadd(b, s, n);
}

/* --- base64, whitespace ignored --- */

static int unbase64(const char *s, size_t n, struct buf *out)
{
	struct buf clean = {0};
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			bufputc(&clean, s[i]);
	int rc = -1;
	if (clean.len % 4 == 0) {
		size_t pad = clean.len && clean.data[clean.len - 1] == '=' ? 1 + (clean.len > 1 && clean.data[clean.len - 2] == '=') : 0;
		unsigned char *raw = xmalloc(clean.len / 4 * 3 + 1);
		int m = clean.len ? EVP_DecodeBlock(raw, (const unsigned char *)clean.data, (int)clean.len) : 0;
		if (m >= 0 && (size_t)m >= pad) {
			bufadd(out, raw, (size_t)m - pad);
			rc = 0;
		}
		OPENSSL_cleanse(raw, clean.len / 4 * 3 + 1);
		free(raw);
	}
	if (clean.data)
		OPENSSL_cleanse(clean.data, clean.len);
	buffree(&clean);
	return rc;
}

static void base64(const void *p, size_t n, struct buf *out)
{
	char *t = xmalloc(4 * ((n + 2) / 3) + 1);
	int m = EVP_EncodeBlock((unsigned char *)t, p, (int)n);
	bufadd(out, t, (size_t)m);
	free(t);
}

/* The bytes between the armor lines begin and end of text, decoded. */
static int unarmor(const char *text, size_t len, const char *begin, const char *end, struct buf *out)
{
	const char *b = memmem(text, len, begin, strlen(begin));
	if (!b)
		return -1;
	b += strlen(begin);
	const char *e = memmem(b, len - (size_t)(b - text), end, strlen(end));
	return e ? unbase64(b, (size_t)(e - b), out) : -1;
}

/* --- keys --- */

/* What of the key file a run must never show: its body (the text between the armor lines, which
 * are the same in every key and stay readable), each base64 line of it, and the lines joined. */
static void keytext(struct signkey *k, const char *text, size_t len)
{
	struct buf joined = {0};
	const char *b = memmem(text, len, keybegin, strlen(keybegin));
	const char *end = b ? memmem(b, len - (size_t)(b - text), keyend, strlen(keyend)) : NULL;
	if (!b || !end)
		return;
	b += strlen(keybegin);
	while (b < end && (*b == '\n' || *b == '\r'))
		b++;
	const char *stop = end;
	while (stop > b && (stop[-1] == '\n' || stop[-1] == '\r'))
		stop--;
	for (const char *p = b; p < stop;) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(stop - p);
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
			n--;
		if (n >= 8) {
			char *line = xasprintf("%.*s", (int)n, p);
			strvadd(&k->text, line);
			OPENSSL_cleanse(line, n);
			free(line);
		}
		bufadd(&joined, p, n);
		p = nl ? nl + 1 : stop;
	}
	if (stop > b) {
		char *body = xasprintf("%.*s", (int)(stop - b), b);
		strvadd(&k->text, body);
		OPENSSL_cleanse(body, strlen(body));
		free(body);
	}
	if (joined.len) {
		bufputc(&joined, 0);
		strvadd(&k->text, joined.data);
		OPENSSL_cleanse(joined.data, joined.len);
	}
	buffree(&joined);
}

void signkeysecrets(const struct signkey *k, struct secrets *s)
{
	for (size_t i = 0; k && i < k->text.n; i++)
		secretsadd(s, "signing key", k->text.v[i]);
}

int signkeyload(const char *path, struct signkey **kp, struct err *e)
{
	struct buf text = {0}, blob = {0};
	*kp = NULL;
	if (readfile(path, &text, e) < 0) {
		e->kind = ERR_INPUT;
		return errctx(e, "signing key");
	}
	int rc = 0;
	struct signkey *k = xcalloc(1, sizeof *k);
	if (unarmor(text.data, text.len, keybegin, keyend, &blob) < 0) {
		rc = errc(e, ERR_INPUT, "signing key %s: not an OpenSSH private key (want the openssh-key-v1 format that ssh-keygen "
		                "-t ed25519 writes)", path);
	} else {
		struct rd r = {(const unsigned char *)blob.data, blob.len, 0};
		const unsigned char *pub, *priv, *pk, *sk, *s;
		static const char magic[] = "openssh-key-v1";
		if (r.n < sizeof magic || memcmp(r.p, magic, sizeof magic) != 0) {
			rc = errc(e, ERR_INPUT, "signing key %s: not an openssh-key-v1 key", path);
		} else {
			r.p += sizeof magic;
			r.n -= sizeof magic;
			int plain = streq(&r, "none");
			int nokdf = streq(&r, "none");
			getstr(&r, &s);
			unsigned nkeys = getu32(&r);
			getstr(&r, &pub);
			size_t privn = getstr(&r, &priv);
			struct rd q = {priv, privn, 0};
			unsigned c1 = getu32(&q), c2 = getu32(&q);
			int ed = streq(&q, "ssh-ed25519");
			size_t pkn = getstr(&q, &pk), skn = getstr(&q, &sk);
			if (r.bad || !plain || !nokdf)
				rc = errc(e, ERR_INPUT, "signing key %s: encrypted with a passphrase; nightshift signs unattended: use a key "
				                "without one (ssh-keygen -t ed25519 -N '')", path);
			else if (nkeys != 1 || q.bad || c1 != c2)
				rc = errc(e, ERR_INPUT, "signing key %s: damaged (its check words differ or it holds %u keys)", path, nkeys);
			else if (!ed)
				rc = errc(e, ERR_INPUT, "signing key %s: not an Ed25519 key (ssh-keygen -t ed25519 makes one)", path);
			else if (pkn != 32 || skn != 64 || memcmp(sk + 32, pk, 32) != 0)
				rc = errc(e, ERR_INPUT, "signing key %s: damaged Ed25519 key", path);
			else {
				memcpy(k->seed, sk, 32);
				memcpy(k->pk, pk, 32);
				/* The public half must be the one the seed makes. */
				EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
				unsigned char derived[32];
				size_t dn = sizeof derived;
				if (!key || EVP_PKEY_get_raw_public_key(key, derived, &dn) != 1 || dn != 32 ||
				    memcmp(derived, k->pk, 32) != 0)
					rc = errc(e, ERR_INPUT, "signing key %s: its public half does not match its private half", path);
				EVP_PKEY_free(key);
				keytext(k, text.data, text.len);
			}
		}
	}
	if (blob.data)
		OPENSSL_cleanse(blob.data, blob.len);
	if (text.data)
		OPENSSL_cleanse(text.data, text.len);
	buffree(&blob);
	buffree(&text);
	if (rc < 0) {
		signkeyfree(k);
		return -1;
	}
	*kp = k;
	return 0;
}

void signkeyfree(struct signkey *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->text.n; i++)
		OPENSSL_cleanse(k->text.v[i], strlen(k->text.v[i]));
	strvfree(&k->text);
	OPENSSL_cleanse(k, sizeof *k);
	free(k);
}

static void pubwire(const unsigned char pk[32], struct buf *b)
{
	putstr(b, "ssh-ed25519", 11);
	putstr(b, pk, 32);
}

/* --- signatures --- */

/* What is signed: the preamble, namespace, reserved, hash name and the message's digest. */
static int signedblob(const char *ns, const char *reserved, size_t rn, const char *hash, const void *data, size_t len,
                      struct buf *b)
{
	const EVP_MD *md = strcmp(hash, "sha512") == 0 ? EVP_sha512() : strcmp(hash, "sha256") == 0 ? EVP_sha256() : NULL;
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned hn = 0;
	if (!md || EVP_Digest(data, len, h, &hn, md, NULL) != 1)
		return -1;
	bufadd(b, "SSHSIG", 6);
	putstr(b, ns, strlen(ns));
	putstr(b, reserved, rn);
	putstr(b, hash, strlen(hash));
	putstr(b, h, hn);
	return 0;
}

static int sshsign(const struct signkey *k, const char *ns, const void *data, size_t len, struct buf *out, struct err *e)
{
	struct buf blob = {0}, sigw = {0}, all = {0}, b64 = {0};
	unsigned char sig[64];
	size_t sn = sizeof sig;
	signedblob(ns, "", 0, "sha512", data, len, &blob);
	EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = key && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
	         EVP_DigestSign(ctx, sig, &sn, (const unsigned char *)blob.data, blob.len) == 1 && sn == 64;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	int rc = 0;
	if (!ok) {
		rc = errf(e, "Ed25519 signing failed (libcrypto)");
	} else {
		struct buf pw = {0};
		pubwire(k->pk, &pw);
		putstr(&sigw, "ssh-ed25519", 11);
		putstr(&sigw, sig, 64);
		bufadd(&all, "SSHSIG", 6);
		putu32(&all, 1);
		putstr(&all, pw.data, pw.len);
		putstr(&all, ns, strlen(ns));
		putstr(&all, "", 0);
		putstr(&all, "sha512", 6);
		putstr(&all, sigw.data, sigw.len);
		base64(all.data, all.len, &b64);
		bufprintf(out, "%s\n", sigbegin);
		for (size_t i = 0; i < b64.len; i += 70) {
			bufadd(out, b64.data + i, b64.len - i < 70 ? b64.len - i : 70);
			bufputc(out, '\n');
		}
		bufprintf(out, "%s\n", sigend);
		buffree(&pw);
	}
	buffree(&blob);
	buffree(&sigw);
	buffree(&all);
	buffree(&b64);
	return rc;
}

/* The next word of an allowed_signers line: up to unquoted white space; quotes kept. */
static const char *word(const char **s, char *out, size_t n)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t k = 0;
	int q = 0;
	for (; *p && (q || (*p != ' ' && *p != '\t')); p++) {
		if (*p == '"')
			q = !q;
		if (k + 1 < n)
			out[k++] = *p;
	}
	out[k] = 0;
	*s = p;
	return k ? out : NULL;
}

/* A time of valid-after/valid-before: YYYYMMDD[HHMM[SS]], UTC with a trailing Z, else local. */
static int whenok(const char *v, time_t *t)
{
	char d[16] = "";
	size_t n = strlen(v), z = n && (v[n - 1] == 'Z' || v[n - 1] == 'z');
	if (n - z != 8 && n - z != 12 && n - z != 14)
		return 0;
	for (size_t i = 0; i < n - z; i++)
		if (!isdigit((unsigned char)v[i]))
			return 0;
	memcpy(d, v, n - z);
	struct tm tm = {0};
	tm.tm_sec = n - z == 14 ? atoi(d + 12) : 0;
	d[12] = 0;
	tm.tm_min = n - z >= 12 ? atoi(d + 10) : 0;
	d[10] = 0;
	tm.tm_hour = n - z >= 12 ? atoi(d + 8) : 0;
	d[8] = 0;
	tm.tm_mday = atoi(d + 6);
	d[6] = 0;
	tm.tm_mon = atoi(d + 4) - 1;
	d[4] = 0;
	tm.tm_year = atoi(d) - 1900;
	tm.tm_isdst = -1;
	*t = z ? timegm(&tm) : mktime(&tm);
	return 1;
}

/* Whether the options of a line allow a signature under ns now; 0 for any option not understood. */
static int optionsok(const char *opts, const char *ns)
{
	char *o = xstrdup(opts), *p = o;
	int ok = 1;
	while (ok && *p) {
		char *start = p;
		int q = 0;
		for (; *p && (q || *p != ','); p++)
			if (*p == '"')
				q = !q;
		if (*p)
			*p++ = 0;
		char *eq = strchr(start, '='), *val = eq ? eq + 1 : NULL;
		if (eq)
			*eq = 0;
		if (val && *val == '"' && strlen(val) >= 2 && val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = 0;
			val++;
		}
		time_t t, now = time(NULL);
		if (strcasecmp(start, "namespaces") == 0 && val) {
			/* A comma-separated pattern list, as ssh's match_pattern_list reads it. */
			int hit = 0, neg = 0;
			for (char *sv, *pat = strtok_r(val, ",", &sv); pat; pat = strtok_r(NULL, ",", &sv)) {
				int not = pat[0] == '!';
				if (fnmatch(pat + not, ns, 0) == 0)
					not ? (neg = 1) : (hit = 1);
			}
			ok = hit && !neg;
		} else if (strcasecmp(start, "valid-after") == 0 && val) {
			ok = whenok(val, &t) && now >= t;
		} else if (strcasecmp(start, "valid-before") == 0 && val) {
			ok = whenok(val, &t) && now <= t;
		} else {
			ok = 0; /* cert-authority (certificates are not taken) or unknown */
		}
	}
	free(o);
	return ok;
}

/* The principals of the first line of allowed that lists public key wire (and allows ns now). */
static int allowedfor(const char *allowed, const struct buf *wire, const char *ns, char **who, int *listed,
                      struct err *e)
{
	struct buf text = {0};
	if (readfile(allowed, &text, e) < 0) {
		e->kind = ERR_INPUT;
		return errctx(e, "--allowed-signers");
	}
	*who = NULL;
	*listed = 0;
	char *save, *line;
	for (line = strtok_r(text.data ? text.data : "", "\n", &save); line && !*who; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line;
		char principals[1024], opts[1024], type[64], key[2048];
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || !word(&p, principals, sizeof principals) || !word(&p, type, sizeof type))
			continue;
		opts[0] = 0;
		if (strncmp(type, "ssh-", 4) != 0 && strncmp(type, "ecdsa-", 6) != 0 && strncmp(type, "sk-", 3) != 0) {
			snprintf(opts, sizeof opts, "%s", type);
			if (!word(&p, type, sizeof type))
				continue;
		}
		if (strcmp(type, "ssh-ed25519") != 0 || !word(&p, key, sizeof key))
			continue;
		struct buf raw = {0};
		if (unbase64(key, strlen(key), &raw) == 0 && raw.len == wire->len && memcmp(raw.data, wire->data, raw.len) == 0) {
			*listed = 1;
			if (!opts[0] || optionsok(opts, ns)) {
				size_t n = strlen(principals);
				if (n >= 2 && principals[0] == '"' && principals[n - 1] == '"') {
					principals[n - 1] = 0;
					*who = xstrdup(principals + 1);
				} else {
					*who = xstrdup(principals);
				}
			}
		}
		buffree(&raw);
	}
	buffree(&text);
	return 0;
}

/* "SHA256:..." as ssh-keygen -l prints a key's fingerprint. */
static void fingerprint(const struct buf *wire, char out[64])
{
	unsigned char h[32];
	unsigned hn = 0;
	struct buf b = {0};
	EVP_Digest(wire->data, wire->len, h, &hn, EVP_sha256(), NULL);
	base64(h, hn, &b);
	while (b.len && b.data[b.len - 1] == '=')
		b.data[--b.len] = 0;
	snprintf(out, 64, "SHA256:%s", b.data);
	buffree(&b);
}

static int sshverify(const char *sig, size_t siglen, const char *ns, const void *data, size_t len, const char *allowed,
              char **who, struct err *e)
{
	struct buf blob = {0}, wire = {0}, msg = {0};
	*who = NULL;
	int rc = 0;
	if (unarmor(sig, siglen, sigbegin, sigend, &blob) < 0) {
		rc = errc(e, ERR_VERIFY, "not an armored SSH signature");
		goto out;
	}
	struct rd r = {(const unsigned char *)blob.data, blob.len, 0};
	const unsigned char *pub, *sns, *res, *hash, *sw;
	if (r.n < 6 || memcmp(r.p, "SSHSIG", 6) != 0) {
		rc = errc(e, ERR_VERIFY, "not an SSHSIG signature");
		goto out;
	}
	r.p += 6;
	r.n -= 6;
	unsigned version = getu32(&r);
	size_t pubn = getstr(&r, &pub), nsn = getstr(&r, &sns), resn = getstr(&r, &res);
	size_t hashn = getstr(&r, &hash), swn = getstr(&r, &sw);
	if (r.bad || r.n || version != 1) {
		rc = errc(e, ERR_VERIFY, "damaged SSHSIG signature (version %u)", version);
		goto out;
	}
	char hname[16];
	snprintf(hname, sizeof hname, "%.*s", (int)(hashn < 15 ? hashn : 15), (const char *)hash);
	if (nsn != strlen(ns) || memcmp(sns, ns, nsn) != 0) {
		rc = errc(e, ERR_VERIFY, "the signature is for namespace '%.*s', not '%s'", (int)(nsn < 64 ? nsn : 64), (const char *)sns, ns);
		goto out;
	}
	struct rd pr = {pub, pubn, 0}, sr = {sw, swn, 0};
	const unsigned char *pk, *sg;
	int ped = streq(&pr, "ssh-ed25519");
	size_t pkn = getstr(&pr, &pk);
	int sed = streq(&sr, "ssh-ed25519");
	size_t sgn = getstr(&sr, &sg);
	if (!ped || !sed || pr.bad || sr.bad || pkn != 32 || sgn != 64) {
		rc = errc(e, ERR_VERIFY, "the signature is not an Ed25519 one (nightshift checks ssh-ed25519 keys)");
		goto out;
	}
	bufadd(&wire, pub, pubn);
	if (signedblob(ns, (const char *)res, resn, hname, data, len, &msg) < 0) {
		rc = errc(e, ERR_VERIFY, "the signature uses hash '%s' (want sha512 or sha256)", hname);
		goto out;
	}
	EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk, 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int good = key && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
	           EVP_DigestVerify(ctx, sg, 64, (const unsigned char *)msg.data, msg.len) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	char fp[64];
	fingerprint(&wire, fp);
	if (!good) {
		rc = errc(e, ERR_VERIFY, "the signature by ED25519 key %s does not match the signed file (changed after signing)", fp);
		goto out;
	}
	int listed = 0;
	if (allowedfor(allowed, &wire, ns, who, &listed, e) < 0) {
		rc = -1;
		goto out;
	}
	if (*who) {
		char *named = xasprintf("%s (ED25519 key %s)", *who, fp);
		free(*who);
		*who = named;
	} else
		rc = errc(e, ERR_VERIFY, listed ? "ED25519 key %s is in %s, but not allowed to sign '%s' now (its options)"
		                       : "signed by ED25519 key %s, which %s does not list", fp, allowed, ns);
out:
	buffree(&blob);
	buffree(&wire);
	buffree(&msg);
	return rc;
}

int runsign(const char *dir, const struct signkey *k, struct err *e)
{
	char *sums = pathjoin(dir, "SHA256SUMS"), *sigp = pathjoin(dir, "SHA256SUMS.sig");
	struct buf data = {0}, sig = {0};
	int rc = readfile(sums, &data, e);
	if (rc == 0)
		rc = sshsign(k, SIGNNAMESPACE, data.data, data.len, &sig, e);
	if (rc == 0)
		rc = writefile(sigp, sig.data, sig.len, e);
	buffree(&data);
	buffree(&sig);
	free(sums);
	free(sigp);
	return rc;
}

int runsigcheck(const char *dir, const char *allowed, char **who, struct err *e)
{
	char *sums = pathjoin(dir, "SHA256SUMS"), *sigp = pathjoin(dir, "SHA256SUMS.sig");
	struct buf data = {0}, sig = {0};
	struct err re = {0};
	int rc = 0;
	*who = NULL;
	if (readfile(sigp, &sig, &re) < 0)
		rc = errc(e, ERR_VERIFY, "SHA256SUMS.sig: missing (the run is not signed)");
	else if (readfile(sums, &data, &re) < 0)
		rc = errc(e, ERR_VERIFY, "SHA256SUMS: missing");
	else if (sshverify(sig.data, sig.len, SIGNNAMESPACE, data.data, data.len, allowed, who, e) < 0)
		rc = e->kind == ERR_INPUT ? -1 : errctx(e, "SHA256SUMS.sig");
	buffree(&data);
	buffree(&sig);
	free(sums);
	free(sigp);
	return rc;
}

int runsigsource(const char *dir, const char *allowed, int signing, enum errkind bad, char **who, struct err *e)
{
	char *sigp = pathjoin(dir, "SHA256SUMS.sig");
	struct stat st;
	int signedrun = lstat(sigp, &st) == 0;
	free(sigp);
	*who = NULL;
	if (signedrun && allowed) {
		if (runsigcheck(dir, allowed, who, e) == 0)
			return 0;
		if (e->kind != ERR_INPUT)
			e->kind = bad;
		return errctx(e, "%s: its signature does not verify with %s", dir, allowed);
	}
	if (signedrun && signing)
		return errc(e, ERR_INPUT, "%s is signed (SHA256SUMS.sig), and nothing was given to check its signature: the "
		                          "new run would be signed over what was never verified; give --allowed-signers FILE",
		            dir);
	if (!signedrun && allowed)
		return errc(e, bad, "%s is not signed, and --allowed-signers %s asks for signed runs (a signature removed "
		                    "is how a forgery would pass)", dir, allowed);
	return signedrun;
}

/* sign: OpenSSH signatures (SSHSIG, Ed25519) of a run's SHA256SUMS, made and checked as
 * `ssh-keygen -Y sign` and `ssh-keygen -Y verify` do. */
#ifndef NS_SIGN_H
#define NS_SIGN_H

#include "../util/secrets.h"
#include "../util/util.h"

/* The namespace of every signature nightshift makes or accepts. */
#define SIGNNAMESPACE "nightshift"

struct signkey;

/* Read an unencrypted OpenSSH Ed25519 private key (openssh-key-v1) from path into *k. Code 2 when
 * the file is not one (encrypted, another key type, damaged); the message never quotes the key. */
int signkeyload(const char *path, struct signkey **k, struct err *e);
/* Add the key file's bytes to s as secrets: its body between the armor lines, each base64 line
 * of it, and the lines joined (k may be NULL). */
void signkeysecrets(const struct signkey *k, struct secrets *s);
/* Wipe and free a key (NULL is fine). */
void signkeyfree(struct signkey *k);


/* Write dir/SHA256SUMS.sig, the signature of dir/SHA256SUMS by k. */
int runsign(const char *dir, const struct signkey *k, struct err *e);
/* Check dir/SHA256SUMS.sig against dir/SHA256SUMS and the allowed_signers file; *who as sshverify. */
int runsigcheck(const char *dir, const char *allowed, char **who, struct err *e);

/* Whether a run that carries the run at dir (merge, run --resume, run --from) may go on, given the
 * allowed_signers file of --allowed-signers (or NULL) and whether the new run is to be signed:
 * - dir signed, allowed given: its signature must verify (else -1, of kind bad); *who the signer;
 * - dir signed, no allowed, signing: -1 (ERR_INPUT): a signature over what was never checked;
 * - dir not signed, allowed given: -1 (of kind bad): a signature removed is a forgery's first step;
 * - dir not signed, no allowed: 0, signed or not (the new signature vouches for these bytes only).
 * Returns 1 when dir is signed and nothing checked it (no allowed, not signing), else 0. */
int runsigsource(const char *dir, const char *allowed, int signing, enum errkind bad, char **who, struct err *e);

#endif

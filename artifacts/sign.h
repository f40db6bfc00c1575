/* sign: OpenSSH signatures (SSHSIG, Ed25519) of a run's SHA256SUMS, made and checked as
 * `ssh-keygen -Y sign` and `ssh-keygen -Y verify` do. */
#ifndef NS_SIGN_H
#define NS_SIGN_H

#include "../util/util.h"

/* The namespace of every signature nightshift makes or accepts. */
#define SIGNNAMESPACE "nightshift"

struct signkey;

/* Read an unencrypted OpenSSH Ed25519 private key (openssh-key-v1) from path into *k. Code 2 when
 * the file is not one (encrypted, another key type, damaged); the message never quotes the key. */
int signkeyload(const char *path, struct signkey **k, struct err *e);
/* Wipe and free a key (NULL is fine). */
void signkeyfree(struct signkey *k);
/* The key's public half as an authorized_keys line ("ssh-ed25519 BASE64"), to be freed. */
char *signkeypublic(const struct signkey *k);

/* The armored SSHSIG signature (hash sha512) of data under namespace ns, appended to out. */
int sshsign(const struct signkey *k, const char *ns, const void *data, size_t len, struct buf *out, struct err *e);
/* Check the armored SSHSIG sig over data under namespace ns against the allowed_signers file at
 * allowed (principals, optional options, key; as ssh-keygen reads it): 0 and *who (the matching
 * line's principals and the key's fingerprint, to be freed) when a listed key made it for ns; else -1, code 4 with why. */
int sshverify(const char *sig, size_t siglen, const char *ns, const void *data, size_t len, const char *allowed,
              char **who, struct err *e);

/* Write dir/SHA256SUMS.sig, the signature of dir/SHA256SUMS by k. */
int runsign(const char *dir, const struct signkey *k, struct err *e);
/* Check dir/SHA256SUMS.sig against dir/SHA256SUMS and the allowed_signers file; *who as sshverify. */
int runsigcheck(const char *dir, const char *allowed, char **who, struct err *e);

#endif

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


/* Write dir/SHA256SUMS.sig, the signature of dir/SHA256SUMS by k. */
int runsign(const char *dir, const struct signkey *k, struct err *e);
/* Check dir/SHA256SUMS.sig against dir/SHA256SUMS and the allowed_signers file; *who as sshverify. */
int runsigcheck(const char *dir, const char *allowed, char **who, struct err *e);

#endif

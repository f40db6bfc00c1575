#!/usr/bin/env bash
# sign: run --sign writes SHA256SUMS.sig, an SSHSIG signature that stock OpenSSH (ssh-keygen -Y
# verify) and audit --allowed-signers both accept; a resealed forgery fails both; a signature made
# by ssh-keygen -Y sign is accepted; wrong keys, namespaces and options are refused; the key is
# never written into the run; merge and finalize re-sign.
source "$(dirname "$0")/lib.sh"
command -v ssh-keygen >/dev/null || { skip sign "ssh-keygen is not installed (openssh-client)"; done_tests; exit; }
command -v zstd >/dev/null || { skip sign "zstd is not installed"; done_tests; exit; }

ssh-keygen -q -t ed25519 -N '' -C night -f "$T/key"
ssh-keygen -q -t ed25519 -N '' -C other -f "$T/other"
echo "night@ci $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed"
cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"

run=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" --sign "$T/key" 2>"$T/err")
expect_rc "run --sign: the run succeeds" 0 $?
check "run --sign writes SHA256SUMS.sig" test -s "$run/SHA256SUMS.sig"
expect_grep "an armored SSH signature" "^-----BEGIN SSH SIGNATURE-----$" "$run/SHA256SUMS.sig"
expect_nogrep "SHA256SUMS does not list its own signature" "SHA256SUMS.sig" "$run/SHA256SUMS"
ssh-keygen -Y verify -n nightshift -f "$T/allowed" -I night@ci -s "$run/SHA256SUMS.sig" < "$run/SHA256SUMS" > "$T/ssh" 2>&1
expect_rc "ssh-keygen -Y verify accepts the honest run" 0 $?
expect_grep "ssh-keygen says who" 'Good "nightshift" signature for night@ci' "$T/ssh"
"$NS" audit "$run" --verify --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "audit --allowed-signers accepts the honest run" 0 $?
expect_grep "and says who signed" "signed by night@ci \(ED25519 key SHA256:" "$T/err"
fp=$(ssh-keygen -lf "$T/key.pub" | cut -d' ' -f2)
check "with the fingerprint ssh-keygen -l prints" grep -qF -- "$fp" "$T/err"
"$NS" audit "$run" --verify 2>"$T/err"
expect_grep "without --allowed-signers the signature is said to be unchecked" "SHA256SUMS.sig present but not checked" "$T/err"

# The private key never reaches the run: not in any file, log line or layer.
mkdir -p "$T/all"
(cd "$run" && find . -type f) | while read -r f; do
	case $f in
	*.tar.zst) mkdir -p "$T/all/$f.d" && tar --zstd -xf "$run/$f" -C "$T/all/$f.d" 2>/dev/null ;;
	*.zst) zstd -dcq "$run/$f" > "$T/all/$(echo "$f" | tr / _)" ;;
	*) cp "$run/$f" "$T/all/$(echo "$f" | tr / _)" ;;
	esac
done
body=$(sed -n 3p "$T/key")
expect_eq "no line of the private key in any artifact" "" "$(grep -rlF -- "$body" "$T/all")"

# A forgery resealed without the key: the unkeyed checks pass, the signature does not.
cp -r "$run" "$T/forged"
where=$(python3 "$ROOT/tests/e2e/tamper.py" forge "$T/forged")
check "the forgery rewrote the denied call" test -n "$where"
"$NS" audit "$T/forged" --verify 2>"$T/err"
expect_rc "the resealed forgery passes the unkeyed checks (why runs are signed)" 0 $?
"$NS" audit "$T/forged" --verify --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "audit --allowed-signers refuses the forgery" 4 $?
expect_grep "naming the signature" "SHA256SUMS.sig: .*does not match the signed file" "$T/err"
ssh-keygen -Y verify -n nightshift -f "$T/allowed" -I night@ci -s "$T/forged/SHA256SUMS.sig" < "$T/forged/SHA256SUMS" >/dev/null 2>&1
expect_rc "ssh-keygen -Y verify refuses the forgery" 255 $?

# A signature made by ssh-keygen is one nightshift accepts, and the other way round above.
cp -r "$run" "$T/byssh" && rm "$T/byssh/SHA256SUMS.sig"
ssh-keygen -q -Y sign -f "$T/key" -n nightshift "$T/byssh/SHA256SUMS" 2>/dev/null
check "ssh-keygen -Y sign wrote its signature" test -s "$T/byssh/SHA256SUMS.sig"
"$NS" audit "$T/byssh" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "nightshift accepts ssh-keygen's signature" 0 $?
expect_grep "and names the signer" "signed by night@ci" "$T/err"
resign() {  # resign KEY NAMESPACE: the run signed again by ssh-keygen
	rm -rf "$T/re" && cp -r "$run" "$T/re" && rm "$T/re/SHA256SUMS.sig"
	ssh-keygen -q -Y sign -f "$1" -n "$2" "$T/re/SHA256SUMS" 2>/dev/null
}
resign "$T/other" nightshift
"$NS" audit "$T/re" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "a key allowed_signers does not list: exit 4" 4 $?
expect_grep "says the key is not listed" "which .*allowed does not list" "$T/err"
resign "$T/key" file
"$NS" audit "$T/re" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "a signature for another namespace: exit 4" 4 $?
expect_grep "says which namespace" "namespace 'file', not 'nightshift'" "$T/err"
echo "night@ci namespaces=\"git,file\" $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed-git"
"$NS" audit "$run" --allowed-signers "$T/allowed-git" 2>"$T/err"
expect_rc "a key allowed only for other namespaces: exit 4" 4 $?
ssh-keygen -Y verify -n nightshift -f "$T/allowed-git" -I night@ci -s "$run/SHA256SUMS.sig" < "$run/SHA256SUMS" >/dev/null 2>&1
expect_rc "ssh-keygen agrees" 255 $?
{ echo "# the nightly signer"; echo; echo "ops@ci,night@ci namespaces=\"nightshift\",valid-after=\"20200101\" $(cut -d' ' -f1,2 "$T/key.pub") a comment"; } > "$T/allowed-opts"
"$NS" audit "$run" --allowed-signers "$T/allowed-opts" 2>"$T/err"
expect_rc "comments, several principals and options are read" 0 $?
expect_grep "every principal named" "signed by ops@ci,night@ci" "$T/err"
echo "night@ci valid-before=\"20200101\" $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed-old"
"$NS" audit "$run" --allowed-signers "$T/allowed-old" 2>"$T/err"
expect_rc "a key no longer valid: exit 4" 4 $?
"$NS" audit "$T/byssh" --allowed-signers "$T/nosuch" 2>"$T/err"
expect_rc "an allowed_signers file that is missing: exit 2" 2 $?
cp -r "$run" "$T/unsigned" && rm "$T/unsigned/SHA256SUMS.sig"
"$NS" audit "$T/unsigned" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "an unsigned run with --allowed-signers: exit 4" 4 $?
expect_grep "says it is not signed" "not signed" "$T/err"
# A missing allowed_signers file is the user's mistake whatever the run holds: exit 2, named.
"$NS" audit "$T/unsigned" --allowed-signers "$T/nosuch" 2>"$T/err"
expect_rc "audit: a missing allowed_signers file, unsigned run: exit 2" 2 $?
expect_grep "naming the file" "allowed-signers $T/nosuch: No such file" "$T/err"
"$NS" merge "$T/unsigned" --out "$T/nomerge" --allowed-signers "$T/nosuch" 2>"$T/err"
expect_rc "merge: a missing allowed_signers file: exit 2" 2 $?
"$NS" run "$T/hello/nightshift.yaml" --resume "$T/unsigned" --allowed-signers "$T/nosuch" >"$T/out" 2>"$T/err"
expect_rc "run --resume: a missing allowed_signers file: exit 2" 2 $?
expect_grep "naming the flag" "allowed-signers $T/nosuch" "$T/err"
printf 'x' >> "$T/unsigned/SHA256SUMS.sig"
cp "$run/SHA256SUMS.sig" "$T/unsigned/SHA256SUMS.sig" && sed -i '2s/./A/5' "$T/unsigned/SHA256SUMS.sig"
"$NS" audit "$T/unsigned" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "a damaged signature: exit 4" 4 $?

# Keys refused before anything runs: exit 2, no run directory.
ssh-keygen -q -t ed25519 -N 'pass phrase' -f "$T/locked"
ssh-keygen -q -t rsa -b 2048 -N '' -f "$T/rsa"
cp "$T/key" "$T/hello/workspace/key"
for k in locked:passphrase rsa:Ed25519 nosuch:nosuch hello/workspace/key:workspace; do
	before=$(ls "$T/runs" | wc -l)
	out=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" --sign "$T/${k%%:*}" 2>"$T/err")
	expect_rc "--sign ${k%%:*}: exit 2" 2 $?
	expect_grep "--sign ${k%%:*}: the reason" "${k#*:}" "$T/err"
	expect_eq "--sign ${k%%:*}: no run made" "$before" "$(ls "$T/runs" | wc -l)"
done
rm "$T/hello/workspace/key"
expect_nogrep "an error never quotes the key" "$(sed -n 2p "$T/locked")" "$T/err"

# The key from the environment; merge and finalize re-sign.
run2=$(NIGHTSHIFT_SIGNING_KEY=$T/key "$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" 2>/dev/null)
"$NS" audit "$run2" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "NIGHTSHIFT_SIGNING_KEY signs" 0 $?
shard=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/shards" --shard 1/1 2>/dev/null)
merged=$("$NS" merge "$shard" --out "$T/merged" --sign "$T/key" 2>"$T/err")
"$NS" audit "$merged" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "merge --sign: the merged run is signed" 0 $?
ssh-keygen -Y verify -n nightshift -f "$T/allowed" -I night@ci -s "$merged/SHA256SUMS.sig" < "$merged/SHA256SUMS" >/dev/null 2>&1
expect_rc "merge --sign: ssh-keygen agrees" 0 $?
cp -r "$run" "$T/killed" && rm "$T/killed/run.json" "$T/killed/SHA256SUMS" "$T/killed/SHA256SUMS.sig" "$T/killed/events.jsonl.zst"
"$NS" finalize "$T/killed" --sign "$T/key" 2>"$T/err"
expect_rc "finalize --sign" 0 $?
"$NS" audit "$T/killed" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "finalize --sign: the sealed run is signed" 0 $?
done_tests

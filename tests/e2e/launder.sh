#!/usr/bin/env bash
# launder: a forged or stripped run never comes out signed. merge, run --resume and run --from check
# a signed source with --allowed-signers before they copy anything; a signed source nothing checked
# is not re-signed (exit 2); with --allowed-signers an unsigned source is refused (a signature
# removed); only when no source is signed and no signer given may --sign sign unsigned sources.
source "$(dirname "$0")/lib.sh"
command -v ssh-keygen >/dev/null || { skip launder "ssh-keygen is not installed (openssh-client)"; done_tests; exit; }
command -v zstd >/dev/null || { skip launder "zstd is not installed"; done_tests; exit; }
needuserns launder

ssh-keygen -q -t ed25519 -N '' -C night -f "$T/key"
ssh-keygen -q -t ed25519 -N '' -C other -f "$T/other"
echo "night@ci $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed"
cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
m=$T/hello/nightshift.yaml

shard=$("$NS" run "$m" --out "$T/shards" --shard 1/1 --sign "$T/key" 2>"$T/err")
expect_rc "a signed shard" 0 $?
other=$("$NS" run "$m" --out "$T/shards2" --shard 1/1 --sign "$T/other" 2>"$T/err")
expect_rc "a shard signed by a key allowed_signers does not list" 0 $?
plain=$("$NS" run "$m" --out "$T/shards3" --shard 1/1 2>"$T/err")
expect_rc "an unsigned shard" 0 $?
cp -r "$shard" "$T/forged"
check "the forgery rewrote a denied call" test -n "$(python3 "$ROOT/tests/e2e/tamper.py" forge "$T/forged")"
"$NS" audit "$T/forged" --verify 2>/dev/null
expect_rc "the forgery passes the unkeyed checks" 0 $?
cp -r "$T/forged" "$T/stripped" && rm "$T/stripped/SHA256SUMS.sig"

count() { find "$T/out" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# merge: NAME WANT-RC WANT-TEXT ARGS...: refused with nothing made, or made and signed as it says
merge() {
	local name=$1 want=$2 text=$3 before
	shift 3
	before=$(count)
	out=$("$NS" merge "$@" --out "$T/out" 2>"$T/err")
	expect_rc "merge $name: exit $want" "$want" $?
	[ -n "$text" ] && expect_grep "merge $name: says why" "$text" "$T/err"
	if [ "$want" != 0 ]; then
		expect_eq "merge $name: no run made" "$before" "$(count)"
		expect_eq "merge $name: nothing on stdout" "" "$out"
	fi
}
merge "forged --sign, no signer given" 2 "forged is signed .*--allowed-signers" "$T/forged" --sign "$T/key"
merge "forged --sign --allowed-signers" 4 "does not verify.*does not match the signed file" "$T/forged" --sign "$T/key" --allowed-signers "$T/allowed"
merge "forged --allowed-signers, not signing" 4 "does not verify" "$T/forged" --allowed-signers "$T/allowed"
merge "a shard by an unlisted key" 4 "does not list" "$other" --sign "$T/key" --allowed-signers "$T/allowed"
merge "stripped of its signature, --allowed-signers" 4 "stripped is not signed" "$T/stripped" --sign "$T/key" --allowed-signers "$T/allowed"
merge "an unsigned shard, --allowed-signers" 4 "not signed" "$plain" --allowed-signers "$T/allowed"
merge "a missing allowed_signers file" 2 "allowed-signers" "$shard" --sign "$T/key" --allowed-signers "$T/nosuch"
merge "honest, checked, re-signed" 0 "" "$shard" --sign "$T/key" --allowed-signers "$T/allowed"
"$NS" audit "$out" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "the honest merge is signed and verifies" 0 $?
merge "unsigned shards, no signer given, --sign" 0 "" "$plain" --sign "$T/key"
"$NS" audit "$out" --allowed-signers "$T/allowed" 2>"$T/err"
expect_rc "  which is signed: the signature vouches for this merge" 0 $?
merge "a signed shard, not signing, nothing given" 0 "" "$shard"

# run --resume and --from: the same decision, before any run directory is made.
runs() { find "$T/runs" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
rerun() {  # NAME WANT-RC WANT-TEXT ARGS...
	local name=$1 want=$2 text=$3 before
	shift 3
	before=$(runs)
	out=$("$NS" run "$m" --out "$T/runs" "$@" 2>"$T/err")
	expect_rc "run $name: exit $want" "$want" $?
	[ -n "$text" ] && expect_grep "run $name: says why" "$text" "$T/err"
	[ "$want" != 0 ] && expect_eq "run $name: no run made" "$before" "$(runs)"
}
for flag in --resume --from; do
	rerun "$flag forged --sign" 2 "forged is signed .*--allowed-signers" $flag "$T/forged" --sign "$T/key"
	rerun "$flag forged --sign --allowed-signers" 2 "does not verify" $flag "$T/forged" --sign "$T/key" --allowed-signers "$T/allowed"
	rerun "$flag forged --allowed-signers" 2 "does not verify" $flag "$T/forged" --allowed-signers "$T/allowed"
	rerun "$flag stripped --sign --allowed-signers" 2 "not signed" $flag "$T/stripped" --sign "$T/key" --allowed-signers "$T/allowed"
	rerun "$flag by an unlisted key" 2 "does not list" $flag "$other" --sign "$T/key" --allowed-signers "$T/allowed"
	NIGHTSHIFT_SIGNING_KEY=$T/key rerun "$flag forged, key from the environment" 2 "forged is signed" $flag "$T/forged"
	rerun "$flag honest --sign --allowed-signers" 0 "" $flag "$shard" --sign "$T/key" --allowed-signers "$T/allowed"
	"$NS" audit "$out" --allowed-signers "$T/allowed" 2>"$T/err"
	expect_rc "run $flag honest: signed and verifies" 0 $?
done
rerun "--allowed-signers alone" 2 "--resume and --from" --allowed-signers "$T/allowed"
done_tests

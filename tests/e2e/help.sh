#!/usr/bin/env bash
# help: every flag of each command's synopsis in shared/DESIGN.md ("Commands") is named by
# `nightshift --help` and by `nightshift COMMAND --help`, and each help exits 0. The synopsis is
# copied here; a flag the contract adds belongs in both lists of the program too.
. "$(dirname "$0")/lib.sh"
synopsis() {
	cat <<'S'
run --out -j --job --set --model --resume --from --shard --fail-on-deny --sign --events --quiet --allowed-signers
validate --set
doctor
policy --worker --tool --command --path --set --json --run
replay --manifest --out --job --strict --continue-live --events
audit --verify --allowed-signers --job --tool --decision --net --json
restore --step --to
diff --job --step
report --out
export --otlp
plan --shards --json
merge --out --sign --allowed-signers
finalize
prune --keep --older-than
init --dir --list
config
S
}
"$NS" --help >"$T/top" 2>&1
expect_rc "nightshift --help" 0 $?
while read -r cmd flags; do
	"$NS" "$cmd" --help >"$T/$cmd" 2>&1
	expect_rc "$cmd --help" 0 $?
	# the command's lines of the overview: from each line naming it to the next command's
	awk -v c="$cmd" '/^  [a-z]/ {on = $1 == c} on' "$T/top" >"$T/top-$cmd"
	for f in $flags; do
		expect_grep "nightshift --help: $cmd names $f" "(^|[^a-z-])$f([^a-z-]|$)" "$T/top-$cmd"
		expect_grep "$cmd --help names $f" "(^|[^a-z-])$f([^a-z-]|$)" "$T/$cmd"
	done
done < <(synopsis)
done_tests

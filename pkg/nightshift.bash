# bash completion for nightshift: subcommands, each one's flags (read from its --help), job ids
# after --job (read from the manifest with `nightshift plan`), files elsewhere.
_nightshift() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} ns=${COMP_WORDS[0]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$ns" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p') --help --version" -- "$cur"))
		return
	fi
	local cmd=${COMP_WORDS[1]}
	case $prev in
	--job)
		local m=${COMP_WORDS[2]}
		if [ -f "$m" ]; then
			COMPREPLY=($(compgen -W "$("$ns" plan "$m" --shards 1 --json 2>/dev/null | tr -c 'a-zA-Z0-9_.-' '\n' | sed -n '/^jobs$/,$p' | sed '1d')" -- "$cur"))
		fi
		return ;;
	--out | --dir | --to) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$ns" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _nightshift nightshift

# bash completion for hotset(1).
#
# The commands and their options are read from the hotset being completed
# (`hotset --help`, `hotset CMD --help`) at each completion, so that they
# never go stale when options change. Only the fixed values of a few
# options are written here.

# _hotset_parse_help HOTSET [CMD]: from the help text, fill _hotset_cmds
# (the "Commands:" list), _hotset_opts (every option, long and short),
# _hotset_arg (option -> the name of its argument, for options taking one)
# and _hotset_runs (set if the command runs a command: "usage: ... CMD [ARGS...]",
# or "[COMMAND [ARG...]]" where it is optional).
_hotset_parse_help() {
	local line in_cmds= in_usage= re_opt re_usage
	# "  -p, --profile PROFILE  ...", "      --json  ...", "  -0, --null  ..."
	re_opt='^ {1,8}(-([[:alnum:]]))?(, )?(--([[:alnum:]][[:alnum:]-]*))?([ =]([A-Z][A-Z0-9_]*))?( {2,}|$)'
	re_usage='\[(--?[[:alnum:]][[:alnum:]-]*)\]'
	_hotset_cmds=() _hotset_opts=() _hotset_arg=() _hotset_runs=
	while IFS= read -r line; do
		[ -n "$line" ] || in_usage=
		if [ "$line" = "Commands:" ]; then
			in_cmds=1
		elif [ -n "$in_cmds" ]; then
			if [[ $line =~ ^\ +([a-z][a-z0-9-]*)(\ |$) ]]; then
				_hotset_cmds+=("${BASH_REMATCH[1]}")
			else
				in_cmds=
			fi
		elif [[ $line =~ $re_opt ]] && [ -n "${BASH_REMATCH[1]}${BASH_REMATCH[4]}" ]; then
			local short=${BASH_REMATCH[1]} long=${BASH_REMATCH[4]} arg=${BASH_REMATCH[7]}
			[ -n "$short" ] && _hotset_add_opt "$short"
			[ -n "$long" ] && _hotset_add_opt "$long"
			if [ -n "$arg" ]; then
				[ -n "$short" ] && _hotset_arg[$short]=$arg
				[ -n "$long" ] && _hotset_arg[$long]=$arg
			fi
		elif [[ $line == usage:* ]] || { [ -n "$in_usage" ] && [[ $line == " "*[![:space:]]* ]]; }; then
			# the synopsis, and the lines that continue it, up to a blank line
			in_usage=1
			[[ $line =~ [\ \[](CMD|COMMAND)\ \[ARGS?\.\.\.\] ]] && _hotset_runs=1
			# options shown only in the synopsis: "usage: hotset [--version] [--help] ..."
			while [[ $line =~ $re_usage ]]; do
				_hotset_add_opt "${BASH_REMATCH[1]}"
				line=${line#*"${BASH_REMATCH[0]}"}
			done
		fi
	done < <(command "$@" --help 2>/dev/null)
}

_hotset_add_opt() {
	local o
	for o in "${_hotset_opts[@]}"; do [ "$o" = "$1" ] && return; done
	_hotset_opts+=("$1")
}

# _hotset_reply WORDS...: the words that start with $cur
_hotset_reply() {
	local w
	COMPREPLY=()
	for w in "$@"; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
}

_hotset_files() {
	compopt -o filenames 2>/dev/null	# fails when not called by a completion
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

# _hotset_value OPTION: complete the argument of OPTION
_hotset_value() {
	case $1 in
	--backend) _hotset_reply auto ptrace bpf; return;;
	--method) _hotset_reply auto willneed pread io_uring; return;;
	--order) _hotset_reply auto given physical; return;;
	--mode) _hotset_reply watch lock; return;;
	--model) _hotset_reply auto kernel lru; return;;
	esac
	case ${_hotset_arg[$1]-} in
	FILE|PROFILE|PATH|DIR) _hotset_files;;
	*) COMPREPLY=();;	# a number, a size, a glob: nothing to offer
	esac
}

# _hotset_takes_arg WORD: WORD is an option whose argument is the next word
_hotset_takes_arg() {
	local w=$1 i
	case $w in
	--*=*) return 1;;
	--*) [ -n "${_hotset_arg[$w]-}" ]; return;;
	-?*)	# a cluster of short options: one taking an argument ends it
		for ((i = 1; i < ${#w}; i++)); do
			[ -n "${_hotset_arg[-${w:i:1}]-}" ] && { [ $((i + 1)) -eq ${#w} ]; return; }
		done;;
	esac
	return 1
}

# _hotset_command_line N: complete words N.. as a command line of their own
# (the job that record and time run).
_hotset_command_line() {
	local n=$1
	if [ "$n" -eq "$COMP_CWORD" ]; then
		mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
	elif declare -F _comp_command_offset >/dev/null; then
		_comp_command_offset "$n"	# bash-completion 2.12 and later
	elif declare -F _command_offset >/dev/null; then
		_command_offset "$n"
	else
		_hotset_files
	fi
}

_hotset() {
	local cur=${COMP_WORDS[COMP_CWORD]} eq_opt= hs=${COMP_WORDS[0]} i w cmd= _hotset_runs
	local -a _hotset_cmds _hotset_opts
	local -A _hotset_arg
	hs=${hs/#\~/$HOME}
	COMPREPLY=()

	# "--opt=value" comes as three words, "--opt" "=" "value" (= breaks words)
	if [ "$cur" = "=" ]; then
		eq_opt=${COMP_WORDS[COMP_CWORD - 1]} cur=
	elif [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[COMP_CWORD - 1]}" = "=" ]; then
		eq_opt=${COMP_WORDS[COMP_CWORD - 2]}
	fi

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break;; esac
	done
	if [ -z "$cmd" ]; then
		_hotset_parse_help "$hs"
		if [[ $cur == -* ]]; then _hotset_reply "${_hotset_opts[@]}"
		else _hotset_reply "${_hotset_cmds[@]}" help
		fi
		return 0
	fi
	if [ "$cmd" = help ]; then
		_hotset_parse_help "$hs"
		[ $((i + 1)) -eq "$COMP_CWORD" ] && _hotset_reply "${_hotset_cmds[@]}"
		return 0
	fi

	_hotset_parse_help "$hs" "$cmd"
	if [[ $eq_opt == --* ]]; then
		_hotset_value "$eq_opt"
		return 0
	fi
	# Walk the words before the cursor as getopt would: options and their
	# arguments, then operands; a command that runs a command (record,
	# time) takes no option after its first operand, the command it runs.
	for ((i++; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == --* ]] && [ "${COMP_WORDS[i + 1]-}" = "=" ]; then
			i=$((i + 2))	# --opt = value
			continue
		fi
		case $w in
		--)
			if [ -n "$_hotset_runs" ]; then _hotset_command_line $((i + 1))
			else _hotset_files
			fi
			return 0;;
		-?*)
			if _hotset_takes_arg "$w"; then
				i=$((i + 1))
				if [ "$i" -eq "$COMP_CWORD" ]; then _hotset_value "$w"; return 0; fi
			fi;;
		*)
			[ -n "$_hotset_runs" ] && { _hotset_command_line "$i"; return 0; };;
		esac
	done
	case $cur in
	-*) _hotset_reply "${_hotset_opts[@]}";;
	*)
		if [ -n "$_hotset_runs" ]; then _hotset_command_line "$COMP_CWORD"
		else _hotset_files
		fi;;
	esac
	return 0
}

complete -F _hotset hotset

#!/usr/bin/env bash
# The bash completion, as make install puts it, completes in a real bash
# (without bash-completion): the commands and the options that hotset's
# help lists, the values of --method, --backend and --order, files, and
# the command line that record and time run. The zsh one is valid zsh.
. "$(dirname "$0")/../lib.sh"

HOTSET=$HOTSET_BUILT	# the binary in the build tree, which make install copies
dest=$TRASH/dest
bindir=$dest/usr/local/bin
bash_completion=$dest/usr/local/share/bash-completion/completions/hotset
zsh_completion=$dest/usr/local/share/zsh/site-functions/_hotset

# install_once: make install into $dest, for all the tests
install_once() {
	[ -e "$bash_completion" ] && return
	hs_make install DESTDIR="$dest" > "$TRASH/install.out" 2>&1 ||
		{ cat "$TRASH/install.out"; return 1; }
}

# complete_line LINE [DIR]: what the completion offers for LINE, the cursor
# at its end, in a fresh bash started in DIR (default: the test's
# directory), with the installed hotset first on PATH: one reply a line,
# sorted. Words are split at blanks, as bash does for these lines.
complete_line() {
	install_once || return
	(cd "${2:-.}" && PATH=$bindir:$PATH bash --norc --noprofile -c '
		. "$1" || exit 1
		spec=$(complete -p hotset) || { echo "no completion for hotset" >&2; exit 1; }
		[[ $spec =~ -F\ ([^ ]+) ]] || { echo "not a function: $spec" >&2; exit 1; }
		COMP_LINE=$2 COMP_POINT=${#2}
		read -ra COMP_WORDS <<< "$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		"${BASH_REMATCH[1]}" hotset "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" ||
			{ echo "the completion function failed" >&2; exit 1; }
		printf "%s\n" "${COMPREPLY[@]}"
	' complete "$bash_completion" "$1") | sed -e '/^$/d' | sort
}

# offers LINE [WORD...]: the completion of LINE is exactly the WORDs (none:
# nothing is offered)
offers() {
	local line=$1 got want=; shift
	got=$(complete_line "$line" | tr '\n' ' ') || return
	[ $# -eq 0 ] || want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	check_eq "$got" "$want"
}

test_expect_success MAKE 'hotset st<TAB> gives status; hotset <TAB> every command of --help' '
	offers "hotset st" status &&
	offers "hotset e" evict &&
	"$HOTSET" --help | sed -n -e "/^Commands:$/,/^$/s/^   \([a-z][a-z0-9-]*\) .*/\1/p" > cmds &&
	test -s cmds && echo help >> cmds &&
	offers "hotset " $(cat cmds) &&
	offers "hotset help w" warm &&
	offers "hotset -" --help --version
'

test_expect_success MAKE 'options are completed, long and short, from the command'"'"'s help' '
	offers "hotset status --js" --json &&
	offers "hotset status --pro" --profile &&
	complete_line "hotset status -" > opts &&
	grep -qx -- -p opts && grep -qx -- --profile opts &&
	grep -qx -- -x opts && grep -qx -- --one-file-system opts &&
	grep -qx -- --help opts &&
	! grep -qx -- --method opts &&
	complete_line "hotset warm --" > opts &&
	grep -qx -- --method opts && grep -qx -- --budget opts &&
	! grep -v "^--" opts &&
	offers "hotset snapshot -x --o" --one-file-system --output
'

test_expect_success MAKE 'the values of --method, --backend and --order' '
	offers "hotset warm --method " auto willneed pread io_uring &&
	offers "hotset warm --method w" willneed &&
	offers "hotset warm -x --order " auto given physical &&
	offers "hotset record --backend " auto ptrace bpf &&
	offers "hotset record --backend p" ptrace &&
	offers "hotset record -q --backend bpf --probe --js" --json
'

test_expect_success MAKE 'files for -p PROFILE, -o PROFILE and the operands' '
	mkdir tree tree/sub && touch tree/a.profile tree/b tree/sub/c &&
	cd tree &&
	offers "hotset status -p " a.profile b sub &&
	offers "hotset status -p a" a.profile &&
	offers "hotset status --profile sub/" sub/c &&
	offers "hotset warm -x -p " a.profile b sub &&
	offers "hotset snapshot -o " a.profile b sub &&
	offers "hotset status -j 4 " a.profile b sub &&
	offers "hotset evict -p a.profile s" sub &&
	offers "hotset show " a.profile b sub &&
	offers "hotset warm -- -" &&
	offers "hotset warm --budget " &&
	offers "hotset status -j "
'

test_expect_success MAKE 'record and time complete the command they run, then its words' '
	mkdir dir && touch dir/input &&
	complete_line "hotset record -- ec" | grep -qx echo &&
	complete_line "hotset record ec" | grep -qx echo &&
	complete_line "hotset record -o out.profile --backend ptrace ec" | grep -qx echo &&
	complete_line "hotset time -q -o report ec" | grep -qx echo &&
	complete_line "hotset time -- ec" | grep -qx echo &&
	! complete_line "hotset status ec" | grep -qx echo &&
	offers "hotset record -o " dir &&
	offers "hotset time -o " dir &&
	offers "hotset record -- cat " dir &&
	offers "hotset time cat dir/" dir/input &&
	offers "hotset time cat --js" &&
	complete_line "hotset record -" | grep -qx -- --backend
'

test_expect_success MAKE 'a new command or option in the help is completed' '
	install_once &&
	# a hotset whose help has a command and options the real one lacks
	mkdir bin && cat > bin/hotset <<-\EOF &&
	#!/bin/sh
	case $1 in
	--help) printf "usage: hotset [--help] COMMAND\n\nCommands:\n   frob       frobnicate\n   run        run\n\n";;
	frob) printf "usage: hotset frob [-Z] PATH\n\n  -Z, --frobnicate FILE  frobnicate FILE\n      --zap              zap\n";;
	run) printf "usage: hotset run [-n N] [--] CMD [ARGS...]\n\n  -n, --times N  run N times\n";;
	esac
	EOF
	chmod +x bin/hotset && touch listed &&
	bindir=$PWD/bin &&
	offers "hotset " frob run help &&
	offers "hotset frob --" --frobnicate --zap &&
	offers "hotset frob -" -Z --frobnicate --zap &&
	offers "hotset frob --frobnicate li" listed &&
	offers "hotset frob -Z li" listed &&
	offers "hotset frob --zap li" listed &&
	complete_line "hotset run -n 2 ec" | grep -qx echo &&
	offers "hotset frob ec" &&
	offers "hotset run -" -n --times &&
	offers "hotset st"
'

test_expect_success MAKE,ZSH 'the zsh completion is valid zsh' '
	install_once &&
	zsh -n "$zsh_completion" &&
	head -n 1 "$zsh_completion" | grep -qx "#compdef hotset"
'

test_done

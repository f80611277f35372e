#!/usr/bin/env bash
# hotset --help, --version and help CMD; every command's --help on stdout
# with exit 0; an unknown command exits 2. Every command has a man page
# whose NAME is its --help summary and which names every option its --help
# lists; hotset(1) lists every command; the pages render without warnings.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
MAN=$ROOT/docs/man
prereq_GROFF() { command -v groff >/dev/null; }

# The commands `hotset --help` lists, one per line: "NAME SUMMARY".
commands_help() {
	"$HOTSET" --help | sed -n -e '/^Commands:$/,/^$/s/^   \([a-z][a-z0-9-]*\)  *\(.*\)$/\1 \2/p'
}
commands() { commands_help | cut -d" " -f1; }

# A man page as plain text: roff's \- as -, font changes and \% dropped.
man_text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\%//g' -e 's/\\(aq/'"'"'/g' "$1"; }
# The lines of one section (.SH NAME) of a man page, as plain text.
man_section() { man_text "$1" | sed -n -e "/^\.SH \"*$2\"*\$/,/^\.SH /p" | sed -e '1d' -e '$d'; }
# The long options (--word) and short ones (-x) that CMD --help lists in
# its option table, as "SHORT LONG" ("- LONG" when there is no short form).
help_options() {
	"$HOTSET" "$1" --help |
	sed -n -e 's/^ \{1,\}-\([A-Za-z0-9]\), --\([a-z][a-z0-9-]*\).*/\1 \2/p' \
	       -e 's/^ \{1,\}--\([a-z][a-z0-9-]*\).*/- \1/p'
}
# Is option word W (such as -x or --json) in text T, as a word of its own?
has_word() { grep -Eq -- "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|\$)" <<< "$2"; }

test_expect_success 'hotset --help exits 0 and lists the commands on stdout' '
	hotset --help > out 2> err && test ! -s err &&
	grep -q "^usage: hotset " out && grep -q "^Commands:$" out &&
	hotset -h > out2 && cmp out out2 &&
	hotset help > out3 && cmp out out3 &&
	commands > cmds && test -s cmds &&
	for c in record time show status warm evict snapshot; do
		grep -qx "$c" cmds || { echo "$c is not listed" >&2; return 1; }
	done
'

test_expect_success '--help lists exactly the command table of src/cli/commands.c' '
	sed -n -e "/commands\[.*\] = {/,/};/p" "$ROOT/src/cli/commands.c" |
		grep -o "&cmd_[a-z0-9_]*" | sed -e "s/^&cmd_//" | sort > table &&
	test -s table &&
	commands | sort > listed &&
	diff table listed
'

test_expect_success 'hotset --version and -V print the version and exit 0' '
	hotset --version > out 2> err && test ! -s err &&
	want=$(sed -n -e "s/^#define HOTSET_VERSION \"\(.*\)\"$/\1/p" "$ROOT/src/lib/base/hotset.h") &&
	check_eq "$(cat out)" "hotset $want" &&
	hotset -V > out2 && cmp out out2
'

test_expect_success 'every CMD --help exits 0 with its usage on stdout; help CMD and -h print the same' '
	for c in $(commands); do
		hotset $c --help > out 2> err || { echo "$c --help failed" >&2; return 1; }
		test ! -s err || { echo "$c --help wrote to stderr" >&2; return 1; }
		head -n 1 out | grep -q "^usage: hotset $c " ||
			{ echo "$c --help: no usage line" >&2; return 1; }
		grep -q -- "--help" out || { echo "$c --help does not list --help" >&2; return 1; }
		hotset help $c > out2 2> err && test ! -s err && cmp out out2 ||
			{ echo "help $c differs" >&2; return 1; }
		hotset $c -h > out3 && cmp out out3 || { echo "$c -h differs" >&2; return 1; }
	done
'

test_expect_success 'an unknown command or option exits 2 with a message on stderr' '
	expect_code 2 hotset no-such-command > out 2> err &&
	test ! -s out && grep -q "no-such-command.* is not a hotset command" err &&
	expect_code 2 hotset help no-such-command > out 2> err &&
	test ! -s out && grep -q "is not a hotset command" err &&
	expect_code 2 hotset --no-such-option > out 2> err &&
	test ! -s out && grep -q "unknown option" err &&
	expect_code 2 hotset > out 2> err &&
	test ! -s out && grep -q "^usage: hotset " err
'

test_expect_success 'every command has a man page whose NAME is its --help summary' '
	commands_help > cmds && test -s cmds &&
	while read -r c summary; do
		test -f "$MAN/hotset-$c.1" || { echo "no docs/man/hotset-$c.1" >&2; return 1; }
		name=$(man_section "$MAN/hotset-$c.1" NAME | tr "\n" " " | sed -e "s/ *$//")
		check_eq "$name" "hotset-$c - $summary" || return 1
	done < cmds
'

test_expect_success 'no man page for a command that does not exist' '
	commands > cmds &&
	for f in "$MAN"/hotset-*.1; do
		c=$(basename "$f" .1) && c=${c#hotset-} &&
		grep -qx "$c" cmds || { echo "$f: no command $c" >&2; return 1; }
	done
'

test_expect_success 'each man page names every long option of CMD --help' '
	for c in $(commands); do
		page=$(man_text "$MAN/hotset-$c.1") &&
		for o in $(hotset $c --help | grep -o -- "--[a-z][a-z0-9-]*" | sort -u); do
			has_word "$o" "$page" || { echo "hotset-$c.1 lacks $o" >&2; return 1; }
		done || return 1
	done
'

test_expect_success 'each SYNOPSIS names every option of CMD --help but --help and --version' '
	for c in $(commands); do
		help_options $c > opts && test -s opts &&
		syn=$(man_section "$MAN/hotset-$c.1" SYNOPSIS) &&
		while read -r s l; do
			test "$l" != help && test "$l" != version || continue
			has_word "--$l" "$syn" || { test "$s" != - && has_word "-$s" "$syn"; } || {
				if [ "$s" = - ]; then s=; else s="-$s or "; fi
				echo "hotset-$c.1 SYNOPSIS lacks $s--$l" >&2; return 1
			}
		done < opts || return 1
	done
'

test_expect_success 'each option of CMD --help is described with its short form' '
	for c in $(commands); do
		help_options $c > opts &&
		opt=$(man_section "$MAN/hotset-$c.1" OPTIONS) &&
		while read -r s l; do
			if [ "$s" = - ]; then
				want="--$l"
			else
				# .BR \-x ", " \-\-long: the two forms side by side
				want="-$s \", \" --$l"
			fi
			grep -qF -- "$want" <<< "$opt" ||
				{ echo "hotset-$c.1 OPTIONS lacks $want" >&2; return 1; }
		done < opts || return 1
	done
'

test_expect_success 'hotset(1) lists every command and its page' '
	test -f "$MAN/hotset.1" &&
	page=$(man_text "$MAN/hotset.1") &&
	list=$(man_section "$MAN/hotset.1" COMMANDS) &&
	for c in $(commands); do
		grep -q "^\.BR hotset-$c (1)" <<< "$list" ||
			{ echo "hotset.1 COMMANDS lacks hotset-$c" >&2; return 1; }
		grep -q "hotset-$c (1)" <<< "$(man_section "$MAN/hotset.1" "SEE ALSO")" ||
			{ echo "hotset.1 SEE ALSO lacks hotset-$c" >&2; return 1; }
	done
'

test_expect_success 'every man page carries the version of hotset --version' '
	v=$(hotset --version) &&
	for f in "$MAN"/*.1; do
		grep -q "^\.TH [A-Z-]* 1 \"[^\"]*\" \"$v\" " "$f" ||
			{ echo "$f: .TH does not say \"$v\"" >&2; return 1; }
	done
'

test_expect_success GROFF 'every man page renders without warnings' '
	for f in "$MAN"/*.1; do
		groff -man -ww -z "$f" 2> err && test ! -s err ||
			{ echo "$f:" >&2; cat err >&2; return 1; }
	done
'

test_expect_success 'a letter means one long option in every command, as docs/options.md says' '
	for c in $(commands); do help_options $c | sed "s/^/$c /"; done > all &&
	test $(wc -l < all) -gt 40 &&
	# status is the counterpart of fincore: its -o is fincore'"'"'s column list
	awk '"'"'$2 != "-" && !($1 == "status" && $2 == "o") {
		if (($2 in long) && long[$2] != $3) { print "-" $2 ": --" long[$2] " and --" $3; bad = 1 }
		long[$2] = $3
	} $2 != "-" { if (($3 in short) && short[$3] != $2) { print "--" $3 ": -" short[$3] " and -" $2; bad = 1 }
		short[$3] = $2 }
	$2 == "-" { none[$3] = 1 }
	END { for (l in none) if (l in short) { print "--" l ": with and without -" short[l]; bad = 1 }
	      exit bad }'"'"' all > clashes || { cat clashes >&2; return 1; }
	# every option is in the table of docs/options.md, with its letter
	while read -r c s l; do
		if [ "$s" = - ]; then row="| \`--$l"; else row="| \`-$s\`, \`--$l"; fi
		grep -qF -- "$row" "$ROOT/docs/options.md" ||
			{ echo "docs/options.md lacks $row ($c)" >&2; return 1; }
	done < all
'

test_expect_success 'a mistyped command or option: what was meant, as git says it' '
	expect_code 2 hotset stauts 2> err &&
	grep -q "'"'"'stauts'"'"' is not a hotset command" err &&
	grep -q "^The most similar command is" err && grep -q "^	status$" err &&
	expect_code 2 hotset xyzzy 2> err && ! grep -q "most similar" err &&
	expect_code 2 hotset status --jsn . 2> err &&
	grep -q "unknown option .--jsn.; did you mean .--json.?" err &&
	expect_code 2 hotset warm --d . 2> err &&
	grep -q "option .--d. is ambiguous; possibilities: --depth --dereference" err &&
	expect_code 2 hotset status --json=1 . 2> err && grep -q "option .--json. takes no argument" err &&
	expect_code 2 hotset status --profile 2> err && grep -q "option .--profile. needs an argument" err &&
	expect_code 2 hotset status -j 8abc . 2> err && grep -q -- "--threads takes a number from 1 to 64, not .8abc." err
'

test_expect_success 'every command prints the version with -V and --version' '
	hotset --version > want &&
	for c in $(commands); do
		hotset $c --version > out && cmp want out && hotset $c -V > out && cmp want out || return 1
	done
'

test_done

#!/usr/bin/env bash
# make install puts the binary under test, every man page, the bash and
# zsh completion, the systemd units and the Slurm prolog under
# DESTDIR/PREFIX; the installed binary runs; make uninstall removes them.
. "$(dirname "$0")/../lib.sh"

HOTSET=$HOTSET_BUILT	# the binary in the build tree, which make install copies
prereq_MAN() { command -v man >/dev/null; }

# The man pages of the repository, by name, one per line.
man_pages() { (cd "$REPO/docs/man" && ls -- *.1); }
# The systemd units, by installed name, one per line.
units() { (cd "$REPO/systemd" && ls -- *.in) | sed -e 's/\.in$//'; }

test_expect_success MAKE 'make install puts bin/hotset and every man page under DESTDIR' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" > out 2>&1 || { cat out; return 1; }
	test -x "$dest/usr/local/bin/hotset" &&
	cmp "$HOTSET" "$dest/usr/local/bin/hotset" &&
	check_eq "$(stat -c %a "$dest/usr/local/bin/hotset")" 755 &&
	man_pages > want && grep -qx hotset.1 want &&
	(cd "$dest/usr/local/share/man/man1" && ls) > got &&
	diff want got &&
	while read -r m; do
		cmp "$REPO/docs/man/$m" "$dest/usr/local/share/man/man1/$m" &&
		check_eq "$(stat -c %a "$dest/usr/local/share/man/man1/$m")" 644 || return 1
	done < want &&
	(cd "$dest" && find . -type f | sort) > files &&
	check_eq "$(wc -l < files)" $(( $(wc -l < want) + 6 + $(units | wc -l) ))
'

test_expect_success MAKE 'make install puts the JSON schema and the option table in the doc directory' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	for d in json.md options.md; do
		cmp "$REPO/docs/$d" "$dest/usr/local/share/doc/hotset/$d" || return 1
	done &&
	hs_make uninstall DESTDIR="$dest" && test ! -e "$dest/usr/local/share/doc/hotset"
'

test_expect_success MAKE 'make install puts the bash and zsh completion under DESTDIR' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	b=$dest/usr/local/share/bash-completion/completions/hotset &&
	z=$dest/usr/local/share/zsh/site-functions/_hotset &&
	cmp "$REPO/completion/hotset.bash" "$b" &&
	cmp "$REPO/completion/_hotset" "$z" &&
	check_eq "$(stat -c %a "$b") $(stat -c %a "$z")" "644 644"
'

test_expect_success MAKE 'make install puts the systemd units in UNITDIR, naming the installed binary' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	u=$dest/usr/local/lib/systemd/system/hotset-persist@.service &&
	units > want && grep -qx hotset-persist@.service want &&
	(cd "$dest/usr/local/lib/systemd/system" && ls) > got &&
	diff want got &&
	check_eq "$(stat -c %a "$u")" 644 &&
	! grep -n @BINDIR@ "$u" &&
	grep -q "^ExecStop=/usr/local/bin/hotset snapshot " "$u" &&
	grep "^ExecStart=" "$u" | grep -q " /usr/local/bin/hotset " &&
	# BINDIR and UNITDIR of their own
	hs_make install DESTDIR="$PWD/other" BINDIR=/opt/hs/bin UNITDIR=/etc/systemd/system &&
	u=$PWD/other/etc/systemd/system/hotset-persist@.service &&
	test -x "$PWD/other/opt/hs/bin/hotset" &&
	grep -q "^ExecStop=/opt/hs/bin/hotset snapshot " "$u" &&
	! grep -n /usr/local/bin "$u" &&
	test ! -e "$PWD/other/usr/local/lib/systemd"
'

test_expect_success MAKE 'make install puts the Slurm prolog in LIBEXECDIR, naming the installed binary' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	s=$dest/usr/local/libexec/hotset/hotset-slurm &&
	check_eq "$(stat -c %a "$s")" 755 &&
	! grep -n @BINDIR@ "$s" &&
	grep -q "^HOTSET=/usr/local/bin/hotset" "$s" &&
	sh -n "$s" &&
	hs_make install DESTDIR="$PWD/other" BINDIR=/opt/hs/bin LIBEXECDIR=/opt/hs/libexec &&
	grep -q "^HOTSET=/opt/hs/bin/hotset" "$PWD/other/opt/hs/libexec/hotset-slurm"
'

test_expect_success MAKE 'a man page is installed for every command' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	"$HOTSET" --help | sed -n -e "/^Commands:$/,/^$/s/^   \([a-z][a-z0-9-]*\) .*/\1/p" > cmds &&
	test -s cmds &&
	while read -r c; do
		test -f "$dest/usr/local/share/man/man1/hotset-$c.1" ||
			{ echo "hotset-$c.1 not installed" >&2; return 1; }
	done < cmds
'

test_expect_success MAKE 'the installed binary runs' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	"$dest/usr/local/bin/hotset" --version > out &&
	grep -q "^hotset [0-9][0-9.]*" out &&
	check_eq "$(cat out)" "$("$HOTSET" --version)" &&
	"$dest/usr/local/bin/hotset" --help > out && grep -q "^Commands:$" out
'

test_expect_success MAKE,MAN 'man finds the installed pages' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	m=$dest/usr/local/share/man &&
	check_eq "$(man -M "$m" -w hotset)" "$m/man1/hotset.1" &&
	check_eq "$(man -M "$m" -w 1 hotset-warm)" "$m/man1/hotset-warm.1"
'

test_expect_success MAKE 'make install twice, then make uninstall removes every file' '
	dest=$PWD/dest &&
	hs_make install DESTDIR="$dest" &&
	hs_make install DESTDIR="$dest" &&
	test -x "$dest/usr/local/bin/hotset" &&
	hs_make uninstall DESTDIR="$dest" > out 2>&1 || { cat out; return 1; }
	test ! -e "$dest/usr/local/bin/hotset" &&
	(cd "$dest" && find . ! -type d) > left &&
	{ test ! -s left || { echo "left after uninstall:"; cat left; false; }; } &&
	hs_make uninstall DESTDIR="$dest"
'

test_expect_success MAKE 'make install and uninstall leave the build and the tree alone' '
	dest=$PWD/dest &&
	before=$(stat -c %Y "$HOTSET") &&
	(cd "$REPO" && find docs/man completion systemd -type f | sort) > tree1 &&
	hs_make install DESTDIR="$dest" && hs_make uninstall DESTDIR="$dest" &&
	check_eq "$(stat -c %Y "$HOTSET")" "$before" &&
	(cd "$REPO" && find docs/man completion systemd -type f | sort) > tree2 &&
	diff tree1 tree2
'

test_done

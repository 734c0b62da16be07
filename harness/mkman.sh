#!/bin/sh
# mkman.sh BIN - print the man page lockbench.1, made from the same text as
# `lockbench help` and each `lockbench COMMAND --help`, so that the two never
# disagree. `make` writes it to build/lockbench.1; `make install` installs it.
set -eu
bin=$1
commands="list run compare check adapter-test audit exercise matrix chaos sweep bench report tour servers"

# roff: a backslash is \e; a line starting with . or ' would be a request
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

version=$("$bin" --version | sed 's/^lockbench //')
cat <<HEAD
.TH LOCKBENCH 1 "" "lockbench $version" "User Commands"
.SH NAME
lockbench \- teach and measure Redis distributed locks
.SH SYNOPSIS
.B lockbench
.I command
.RI [ options ]
.SH DESCRIPTION
lockbench runs lock strategies (the recipes people copy from blog posts, and the fixes)
against redis-server processes it starts on loopback, forks contending client processes,
injects faults on cue, judges the history with an oracle that does not trust the lock, and
draws charts. The text below is what
.B lockbench help
and
.B lockbench
.I command
.B \-\-help
print.
.PP
.nf
HEAD
"$bin" help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $commands; do
	echo ".SS lockbench $c"
	echo ".nf"
	"$bin" "$c" --help 2>&1 | esc
	echo ".fi"
done
cat <<TAIL
.SH SEE ALSO
.BR redis-server (1),
.BR gnuplot (1).
README.md and docs/ in the source tree, installed in PREFIX/share/doc/lockbench.
TAIL

#!/bin/sh
# measured.sh SCENARIO DIR... - the figures a lesson page quotes as ranges, one
# row per run, from every run of SCENARIO under the matrix directories DIR
# (DIR/SCENARIO/STRATEGY/REP/summary.csv), sorted by strategy and seed.
# Written to docs/measured/<scenario>.csv, it is what test_scenario checks a
# page's marked ranges against (<!-- measured: ... -->, docs/architecture.md).
# Usage: sh harness/measured.sh holder-pause /tmp/m1 [/tmp/m2 ...] > docs/measured/holder-pause.csv
set -eu
sc=$1
shift
cols=strategy,scenario,seed,observed,sections,overlaps,overlap_ms,lost_updates,foreign_releases,counter_writes,counter_final,applied_writes,stale_writes_rejected,writes_aborted,orphan_ms,recovered
echo "$cols"
for d in "$@"; do
	find "$d/$sc" -mindepth 3 -maxdepth 3 -name summary.csv
done | while read -r f; do
	awk -F, -v cols="$cols" '
		NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
		{
			n = split(cols, c, ",")
			line = ""
			for (i = 1; i <= n; i++) {
				if (!(c[i] in at)) { print FILENAME ": no column " c[i] > "/dev/stderr"; exit 1 }
				line = line (i > 1 ? "," : "") $(at[c[i]])
			}
			print line
		}' "$f"
done | sort -t, -k1,1 -k3,3n

#!/bin/sh
# tourref.sh BIN OUT - `make tour-reference`: every lesson of `lockbench tour`
# run afresh at seed 7 (BIN tour --live), then the files the deck and
# `lockbench check` need of each run copied into OUT (docs/tour/LESSON/RUN),
# each checked there, and OUT/SOURCE.md saying which commit, command and
# machine made them. Commit the result on its own.
set -eu
BIN=$1
OUT=$2
LIVE=build/tour-live
rm -rf "$LIVE"
"$BIN" tour --live --seed 7 --out "$LIVE"
rm -rf "$OUT"
mkdir -p "$OUT"
for run in "$LIVE"/*/*/; do
	run=${run%/}
	rel=${run#"$LIVE"/}
	mkdir -p "$OUT/$rel"
	for f in summary.csv summary.json history.csv events.csv keyevents.csv attempts.csv \
		latency.csv latency-censored.csv waiters.csv meta.txt; do
		[ -f "$run/$f" ] && cp "$run/$f" "$OUT/$rel/"
	done
	"$BIN" check "$OUT/$rel" > /dev/null || { echo "check disagrees on $OUT/$rel" >&2; exit 1; }
done
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- harness strategies scenarios 2>/dev/null || commit="$commit (with uncommitted changes)"
{
	printf '# The tour'"'"'s reference runs\n\n'
	printf 'Made by `make tour-reference` (`lockbench tour --live --seed 7`, then\n'
	printf 'harness/tourref.sh kept the files the deck and `lockbench check` read) at\n'
	printf 'lockbench commit %s, %s UTC.\n\n' "$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'Each run'"'"'s meta.txt names its own command, seed, Redis version and machine.\n'
	printf '`lockbench check` agrees with every one. `lockbench tour` draws its deck from\n'
	printf 'them without running anything.\n\n| lesson/run | command |\n|---|---|\n'
	for m in "$OUT"/*/*/meta.txt; do
		rel=${m#"$OUT"/}
		printf '| %s | `%s` |\n' "${rel%/meta.txt}" "$(sed -n 's/^command: //p' "$m" | sed "s|$LIVE/||")"
	done
} > "$OUT/SOURCE.md"
echo "reference runs in $OUT ($(du -sk "$OUT" | cut -f1) KiB); commit them on their own"

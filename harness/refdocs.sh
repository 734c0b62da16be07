#!/bin/sh
# refdocs.sh REF BIN - after `make reference`: the "The reference run" section of
# every pitfall page with lesson cells (`BIN list --lessons`) gets, for each of
# them, its figures as REF/matrix.md gives them and its timeline
# (docs/img/SCENARIO--STRATEGY.png, copied by `make reference-docs`). The pages'
# reference numbers then come from one run, and test_scenario checks them
# against docs/reference-matrix.md, the same run's table.
#
# A third argument, a grep -E pattern, keeps only the cells it matches: the
# pages of a run of some strategies alone (the consensus locks' reference run,
# docs/reference-matrix.md's second table) are written without the others'.
set -eu
REF=$1
BIN=$2
cells=$("$BIN" list --lessons)
[ $# -lt 3 ] || cells=$(printf '%s\n' $cells | grep -E -- "$3" || true)

# The cell of @1 (scenario) x @2 (strategy) in REF/matrix.md, "<br>" as ": ".
cell() {
	awk -F'|' -v sc="$1" -v st="$2" '
		function trim(s) { gsub(/^ +| +$/, "", s); return s }
		/^\| scenario \|/ { for (i = 2; i <= NF; i++) if (trim($i) == st) col = i }
		col && trim($2) == sc { v = trim($col); gsub(/<br>/, ": ", v); print v; exit }
	' "$REF/matrix.md"
}

for sc in $(printf '%s\n' $cells | cut -d/ -f1 | uniq); do
	page=docs/pitfalls/$sc.md
	grep -q '^## The reference run$' "$page" || { echo "$page: no '## The reference run' section" >&2; exit 1; }
	block=$(mktemp)
	for c in $(printf '%s\n' $cells | grep "^$sc/"); do
		st=${c#*/}
		fig=$(cell "$sc" "$st")
		[ -n "$fig" ] || { echo "no cell $sc x $st in $REF/matrix.md" >&2; rm -f "$block"; exit 1; }
		printf '**%s**: %s\n\n![%s under %s](../img/%s--%s.png)\n\n' "$st" "$fig" "$st" "$sc" "$sc" "$st" >> "$block"
	done
	# right under the heading, between markers (rewritten each time); the
	# section's own words (captions) stay after it, its old images go
	awk -v blockfile="$block" '
		/^## / { insec = ($0 == "## The reference run") }
		/^<!-- reference:begin/ { skip = 1; next }
		skip { if (/^<!-- reference:end/) skip = 0; next }
		insec && /^!\[.* under .*\]\(\.\.\/img\// { dropped = 1; next }
		dropped && /^$/ { dropped = 0; next }
		eat && /^$/ { next }
		eat { print ""; eat = 0 }
		{ dropped = 0; print }
		/^## The reference run$/ {
			print ""
			print "<!-- reference:begin: make reference-docs writes this from the reference run; edits here are lost -->"
			while ((getline l < blockfile) > 0) print l
			print "<!-- reference:end -->"
			eat = 1
		}
	' "$page" > "$page.tmp"
	mv "$page.tmp" "$page"
	rm -f "$block"
done

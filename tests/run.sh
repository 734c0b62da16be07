#!/usr/bin/env bash
# tests/run.sh BIN... - run the criterion test binaries in TEST_LANES (2) lanes
# side by side; each binary's output is printed whole when it ends, and every
# failing binary is named at the end (exit 1 if any failed).
#
# Why lanes: most of the suite waits (a lease to expire, a failover, a
# scenario's clock), so one binary at a time left the two cores two-thirds idle
# (docs/architecture.md, "The test suite"). Tests of different binaries may run
# side by side because every check of what a test left behind is scoped to
# what that test started (fx_left and fx_nothing_left: the LBTEST_OWNER and
# LBTEST_SPAWN tags; server directories named after their lockbench's pid).
# TEST_LANES=1 runs one binary at a time.
set -u

if [ "${1:-}" = --one ]; then
	# one binary (in a lane): its output whole, under a lock so two never interleave
	bin=$2 dir=$3
	log=$(mktemp "$dir/log.XXXXXX")
	start=$(date +%s)
	"$bin" --jobs 2 > "$log" 2>&1
	st=$?
	{
		flock 9
		echo "== $bin ($(( $(date +%s) - start )) s)"
		cat "$log"
		# output that ends without a newline does not run into the next header
		[ ! -s "$log" ] || [ -z "$(tail -c 1 "$log")" ] || echo
		if [ $st -ne 0 ]; then
			# the reasons again at the end, where a log cut to its tail keeps
			# them: each failed test ([FAIL]), crash and sanitizer's report, then
			# criterion's failed assertions ([----]), at most 30 lines of those
			# (-a: a NUL in the output must not make grep call the log binary)
			why=""
			[ $st -eq 127 ] && why=": not found, or not a program"
			[ $st -gt 128 ] && [ $st -ne 255 ] && why=": killed by signal $(( st - 128 )) ($(kill -l $(( st - 128 )) 2>/dev/null))"
			echo "$bin (exit $st)$why" >> "$dir/failed"
			grep -a -E '^\[FAIL\]|CRASH|ERROR: AddressSanitizer|runtime error|LeakSanitizer' \
				"$log" | head -n 20 | sed 's/^/    /' >> "$dir/failed"
			n=$(grep -a -c -E '^\[----\]' "$log")
			grep -a -E '^\[----\]' "$log" | head -n 30 | sed 's/^/    /' >> "$dir/failed"
			[ "$n" -le 30 ] || echo "    ... and $(( n - 30 )) more [----] lines, in its output above" >> "$dir/failed"
		fi
	} 9>>"$dir/lock"
	rm -f "$log"
	exit 0
fi

lanes=${TEST_LANES:-2}
case $lanes in
1|2) ;;
*) echo "tests/run.sh: TEST_LANES must be 1 or 2, got '$lanes'" >&2; exit 2;;
esac
if [ $# -eq 0 ]; then
	echo "tests/run.sh: no test binaries given (usage: tests/run.sh BIN...): nothing ran, which is no pass" >&2
	exit 2
fi

# Two lanes: the binaries that keep the CPUs busy (Chromium, the Node and
# Python libraries, the contract table's many small runs) one after another in
# the first, so that no two of them measure each other's load, with the quick
# ones after them; every other binary, the slowest first, in the second. Wall
# times and CPU of each binary: docs/architecture.md, "The test suite".
cpu=" test_adapters test_adapter_test test_browser test_strategies test_exercise "
wait=" test_deployment test_run test_matrix test_topology test_keywatch test_consensus_run
       test_cluster test_gate test_install test_consensus test_chaos test_attempts
       test_scenario test_consensus_adapters test_report test_deps "
lane1=() lane2=()
for s in $cpu; do
	for b in "$@"; do [ "$(basename "$b")" = "$s" ] && lane1+=("$b"); done
done
for s in $wait; do
	for b in "$@"; do [ "$(basename "$b")" = "$s" ] && lane2+=("$b"); done
done
for b in "$@"; do
	case "$cpu$wait" in *[[:space:]]"$(basename "$b")"[[:space:]]*) ;; *) lane1+=("$b");; esac
done
if [ "$lanes" = 1 ]; then
	lane1+=("${lane2[@]}")
	lane2=()
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/lbtest-run-XXXXXX") || exit 2
pids=()
# interrupted: the lanes, the binaries they run and those binaries' tests go too
tree() { local c; for c in $(pgrep -P "$1"); do tree "$c"; done; kill -TERM "$1" 2>/dev/null; }
trap 'for p in "${pids[@]}"; do tree "$p"; done; wait; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
start=$(date +%s)
lane() {
	for b in "$@"; do
		bash "$0" --one "$b" "$dir"
	done
}
lane "${lane1[@]}" &
pids+=($!)
[ ${#lane2[@]} -eq 0 ] || { lane "${lane2[@]}" & pids+=($!); }
wait
pids=()
if [ -s "$dir/failed" ]; then
	echo "== failed:" >&2
	cat "$dir/failed" >&2
	exit 1
fi
echo "== $(( ${#lane1[@]} + ${#lane2[@]} )) test binaries passed in $(( $(date +%s) - start )) s ($lanes at a time)"

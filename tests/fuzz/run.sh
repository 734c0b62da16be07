#!/usr/bin/env bash
# run.sh [--execs N] [--jobs J] SECONDS TARGET... - run each AFL++ harness
# (build/fuzz/fuzz_TARGET) from its seed corpus until N executions (AFL's -E;
# 0: no count, SECONDS alone), at most SECONDS each (-V), J harnesses side by
# side (one a core), then report executions, crashes and hangs. The scenario
# harness starts from scenarios/ itself; the others from
# tests/fuzz/corpus/TARGET (real files of reference runs). Exit 1 on any crash
# or hang, or a harness that stopped at SECONDS short of N executions: each
# crash or hang becomes a regression input in tests/fuzz/regressions/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/../.."
execs=0 jobs=1
while [[ ${1:-} == --* ]]; do
  case $1 in
    --execs) execs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
secs=$1
shift
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
       AFL_SUPPRESS_UNNECESSARY_WARNING=1 AFL_NO_AFFINITY=1
bad=0
mkdir -p build/fuzz/out
# one harness: its corpus, a private TMPDIR, afl-fuzz until its count or time
run_one() {
  local t=$1 in out tmp
  in=tests/fuzz/corpus/$t
  [[ $t == scenario || $t == scenario_file ]] && in=scenarios
  [[ $t == import_out ]] && in=tests/fuzz/corpus/import
  [[ $t == manifest ]] && in=build/fuzz/manifest-seeds
  out=build/fuzz/out/$t
  if [[ $t == manifest ]]; then # the shipped manifests, without the programs beside them
    rm -rf "$in" && mkdir -p "$in" && cp strategies/adapters/*.adapter "$in"/
  fi
  rm -rf "$out"
  # the harnesses that write files do it under TMPDIR: a private one, removed
  # after the run with whatever a killed (hung) execution left in it
  tmp=$PWD/build/fuzz/tmp/$t
  rm -rf "$tmp" && mkdir -p "$tmp"
  # -t: a hang is an input that takes over 5 s (one execution takes under
  # 0.2 s; at 1 s, two harnesses side by side on a loaded 2-core machine
  # saved four "hangs" of scenario_file that replay in 0.06 to 0.14 s; a
  # reader that blocks on a FIFO never returns, and is caught either way);
  # -E: stop after that many executions; -V: and after SECONDS whatever the count
  local count=()
  (( execs > 0 )) && count=(-E "$execs")
  TMPDIR=$tmp afl-fuzz "${count[@]}" -V "$secs" -t 5000 -m none -i "$in" -o "$out" -- \
    "build/fuzz/fuzz_$t" > "build/fuzz/$t.log" 2>&1 || { echo "afl-fuzz failed for $t: see build/fuzz/$t.log"; return 1; }
  rm -rf "$tmp"
}
running=0
for t in "$@"; do
  if (( running >= jobs )); then wait -n || bad=1; running=$((running - 1)); fi
  run_one "$t" &
  running=$((running + 1))
done
while (( running > 0 )); do wait -n || bad=1; running=$((running - 1)); done
printf '%-12s %12s %9s %8s %7s\n' harness executions 'per sec' crashes hangs > build/fuzz/report.txt
for t in "$@"; do
  stats=build/fuzz/out/$t/default/fuzzer_stats
  [[ -f $stats ]] || { printf '%-12s %12s\n' "$t" "not run" >> build/fuzz/report.txt; bad=1; continue; }
  done_=$(awk -F': ' '/^execs_done/ {print $2}' "$stats")
  rate=$(awk -F': ' '/^execs_per_sec/ {print $2}' "$stats")
  crashes=$(awk -F': ' '/^saved_crashes|^unique_crashes/ {print $2}' "$stats" | head -1)
  hangs=$(awk -F': ' '/^saved_hangs|^unique_hangs/ {print $2}' "$stats" | head -1)
  short=""
  if (( execs > 0 && done_ < execs * 99 / 100 )); then
    short="  (stopped at $secs s, short of $execs executions)"; bad=1
  fi
  printf '%-12s %12s %9s %8s %7s%s\n' "$t" "$done_" "$rate" "$crashes" "$hangs" "$short" >> build/fuzz/report.txt
  if (( crashes > 0 || hangs > 0 )); then
    bad=1
    echo "$t: inputs in build/fuzz/out/$t/default/crashes and build/fuzz/out/$t/default/hangs"
  fi
done
cat build/fuzz/report.txt
exit $bad

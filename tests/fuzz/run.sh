#!/usr/bin/env bash
# run.sh SECONDS TARGET... - run each AFL++ harness (build/fuzz/fuzz_TARGET) for
# SECONDS from its seed corpus, then report executions, crashes and hangs. The
# scenario harness starts from scenarios/ itself; the others from
# tests/fuzz/corpus/TARGET (real files of reference runs). Exit 1 on any crash
# or hang: each becomes a regression input in tests/fuzz/regressions/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=$1
shift
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
       AFL_SUPPRESS_UNNECESSARY_WARNING=1 AFL_NO_AFFINITY=1
bad=0
printf '%-10s %12s %9s %8s %7s\n' harness executions 'per sec' crashes hangs > build/fuzz/report.txt
for t in "$@"; do
  in=tests/fuzz/corpus/$t
  [[ $t == scenario || $t == scenario_file ]] && in=scenarios
  [[ $t == import_out ]] && in=tests/fuzz/corpus/import
  [[ $t == manifest ]] && in=build/fuzz/manifest-seeds
  out=build/fuzz/out/$t
  if [[ $t == manifest ]]; then # the shipped manifests, without the programs beside them
    rm -rf "$in" && mkdir -p "$in" && cp strategies/adapters/*.adapter "$in"/
  fi
  rm -rf "$out"
  mkdir -p build/fuzz/out
  # the harnesses that write files do it under TMPDIR: a private one, removed
  # after the run with whatever a killed (hung) execution left in it
  tmp=$PWD/build/fuzz/tmp/$t
  rm -rf "$tmp" && mkdir -p "$tmp"
  # -t: a hang is an input that takes over 1 s; -V: stop after SECONDS
  TMPDIR=$tmp afl-fuzz -V "$secs" -t 1000 -m none -i "$in" -o "$out" -- "build/fuzz/fuzz_$t" \
    > "build/fuzz/$t.log" 2>&1 || { echo "afl-fuzz failed for $t: see build/fuzz/$t.log"; bad=1; continue; }
  rm -rf "$tmp"
  stats=$out/default/fuzzer_stats
  execs=$(awk -F': ' '/^execs_done/ {print $2}' "$stats")
  rate=$(awk -F': ' '/^execs_per_sec/ {print $2}' "$stats")
  crashes=$(awk -F': ' '/^saved_crashes|^unique_crashes/ {print $2}' "$stats" | head -1)
  hangs=$(awk -F': ' '/^saved_hangs|^unique_hangs/ {print $2}' "$stats" | head -1)
  printf '%-10s %12s %9s %8s %7s\n' "$t" "$execs" "$rate" "$crashes" "$hangs" >> build/fuzz/report.txt
  if (( crashes > 0 || hangs > 0 )); then
    bad=1
    echo "$t: inputs in $out/default/crashes and $out/default/hangs"
  fi
done
cat build/fuzz/report.txt
exit $bad

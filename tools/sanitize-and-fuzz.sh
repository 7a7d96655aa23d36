#!/usr/bin/env bash
# Hostile-file hardening and deterministic CI: the sanitizer and fuzz part of CI (called by tools/test.sh; runs alone too):
#   1. builds the simulator, its tests, the CLI and the libFuzzer targets (tests/fuzz) with
#      clang, ASan + UBSan, -fno-sanitize-recover=all, into build-sanitize/;
#   2. runs the ctest labels sim, cli and fuzz-regression under the sanitizers (the reference's
#      own tests, label reference, are left to the normal build: they are pure arithmetic
#      and would double this step's time);
#   3. the deterministic fuzz stage, per target (tools/fuzz-common.sh lists them and their
#      regression inputs):
#      a. replays the regression inputs (the committed corpus tests/fuzz/corpus/<target>/ and
#         the shipped fixtures) in one process with -runs=0, going on after any input that
#         stops the process;
#      b. fuzzes for a fixed number of executions from a fixed seed (-seed=1 -runs=N, N below;
#         no time limit, no fork mode), seeded with the regression inputs that passed.
#      Every input either step saves is run again alone and classified by one rule
#      (tools/fuzz-classify.sh, docs/robustness.md): a FINDING in dgq fails the script; a known
#      libhdf5 defect, or an input that reproduces nothing alone, is printed and kept under
#      build-sanitize/fuzz-work/<target>/.
# The same commit prints the same counts on every run and every machine of the same toolchain
# (docs/robustness.md says what was made deterministic and how it was checked); only the
# times in parentheses vary. Exploratory, time-boxed fuzzing is tools/fuzz-explore.sh.
# Knobs: DGQ_SANITIZE_BUILD_DIR (build-sanitize), DGQ_JOBS (nproc), DGQ_SANITIZE_BUILD_ONLY (0; 1
# stops after step 1: tools/test.sh builds while ctest runs), DGQ_SANITIZE_SKIP_TESTS
# (0; 1 skips step 2), DGQ_SKIP_FUZZ (0; 1 skips step 3), DGQ_FUZZ_RUNS_PERCENT (100; scales
# every N: any value gives the same counts on every run, CI uses 100), DGQ_FUZZ_TARGETS (all:
# tools/fuzz-common.sh; a space-separated subset).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${DGQ_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${DGQ_JOBS:-$(nproc)}
start=$SECONDS
elapsed() { echo "$((SECONDS - start)) s"; }
source tools/fuzz-common.sh
source tools/fuzz-classify.sh

# The fuzz counts must not depend on where the checkout is, and they did (docs/robustness.md,
# "Sanitizers and fuzzing in CI"): the build, the tests and every libFuzzer process go through
# one fixed folder (enter_fuzz_stage, tools/fuzz-common.sh).
enter_fuzz_stage "$build"
sanitize_build "$build" "$jobs" test_sim dgq make_cli_fixtures "${fuzz_targets[@]}"
echo "sanitize: built in $(elapsed)"
if [ "${DGQ_SANITIZE_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi

# The ctest stage unwinds allocation stacks the fast way (frame pointers): the slow unwinder that
# the fuzz stage needs for its leak suppressions (tools/fuzz-common.sh) made these 250 short
# processes 3x slower (80 s against 27 s on two cores). The one test whose leak is suppressed by
# libhdf5's function names sets the slow unwinder again itself (tests/cli/CMakeLists.txt). The
# options are the fuzz stage's (tools/fuzz-common.sh) with the unwinder switched (the last wins).
[ "${DGQ_SANITIZE_SKIP_TESTS:-0}" = 1 ] ||
  ASAN_OPTIONS=${DGQ_CTEST_ASAN_OPTIONS:-$ASAN_OPTIONS:fast_unwind_on_malloc=1} \
    ctest --test-dir "$stage/b" -L '^(sim|cli|fuzz-regression)$' --output-on-failure -j "$jobs"
echo "sanitize: ASan+UBSan tests (labels sim, cli, fuzz-regression) passed after $(elapsed)"
if [ "${DGQ_SKIP_FUZZ:-0}" = 1 ]; then
  echo "sanitize: done in $(elapsed) (fuzz stage skipped: DGQ_SKIP_FUZZ=1)"
  exit 0
fi

# Executions per target (-runs=N, the seed inputs' own executions included): about 10 s each
# on two idle cores, 75 s for the seven (docs/robustness.md, "How long CI takes"). CI's stage is a
# regression check with a short deterministic fuzz on top; the fuzzing that finds new inputs is
# tools/fuzz-explore.sh, whose finds become regression inputs.
declare -A fuzz_runs=(
  [fuzz_trace]=150 [fuzz_compressed]=120 [fuzz_results]=50 [fuzz_model]=180
  [fuzz_gguf]=1500 [fuzz_tokens]=180 [fuzz_base_logits]=130 [fuzz_sweep_toml]=8000
)
runs_percent=${DGQ_FUZZ_RUNS_PERCENT:-100}
max_restarts=100  # a bound only: fuzzing restarts after a known libhdf5 defect at most this often

# What makes a run depend only on its inputs and flags:
#   -seed_inputs=@LIST (paths in LIST's order) instead of corpus folders: libFuzzer runs seed
#     inputs sorted by size and, for equal sizes, in the order it found them, which for a
#     folder is the file system's (directory hashing differs between machines);
#   -shuffle=0 -prefer_small=1: that order, not a shuffled one, so the replay knows which inputs
#     ran before the one that stopped it;
#   -reload=0: no rereading of the output corpus every few seconds (a timer);
#   an empty output folder per run; -seed, -runs and the limits fixed (tools/fuzz-common.sh).
deterministic_flags=(-shuffle=0 -prefer_small=1 -reload=0 -print_final_stats=1)

# write_list FILE PATH...: the comma-separated list -seed_inputs=@FILE reads (no newline).
write_list() {
  local file=$1
  shift
  local IFS=,
  printf '%s' "$*" >"$file"
}
# Paths in the order libFuzzer runs them: by size, ties in the given order (stdin: paths).
execution_order() {
  while IFS= read -r path; do
    if [ -n "$path" ]; then printf '%s\t%s\n' "$(stat -c %s "$path")" "$path"; fi
  done | sort -s -n -k1,1 | cut -f2-
}
saved_input() { ls "$1"/crash-* "$1"/leak-* "$1"/timeout-* "$1"/oom-* 2>/dev/null | head -1 || true; }
relative() {  # a path as the output shows it: from the checkout or from the build folder
  local path=${1#"$stage/r/"}
  path=${path#"$stage/b/"}
  path=${path#"$root"/}
  echo "$path"
}
stats_of() {  # LOG: "cov: X ft: Y corp: A/Bb" of the last stats line
  grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$1" | tail -1 || true
}

total_inputs=0 total_runs=0 total_known=0 total_alone=0 status=0
# record CLASS WHERE WHAT LOG: prints one judged input (WHAT: its path, or what stands for it)
# and counts it; LOG is the output it was judged by.
record() {
  case $1 in
    finding)
      echo "fuzz:   FINDING in dgq: $3 (first frame: $2; report: $(relative "$4"))"
      target_status=1 status=1 ;;
    libhdf5)
      echo "fuzz:   known libhdf5 defect: $3 ($2)"
      known=$((known + 1)) ;;
    not-reproducible)
      echo "fuzz:   not reproducible alone: $3"
      alone=$((alone + 1)) ;;
  esac
}
# judge_exit_leak LOG RC: when LOG ends with a leak report at the process's exit, judges and
# records it and returns 0.
judge_exit_leak() {
  fuzz_exit_leak "$1" || return 1
  fuzz_judge_report "$1" "$2"
  record "$fuzz_class" "$fuzz_where" "leaks reported at the exit of the process, after its last input" "$1"
}

targets=(${DGQ_FUZZ_TARGETS:-${fuzz_targets[@]}})

# fuzz_target TARGET: the regression replay and the fuzzing of one target; prints its lines and
# writes "inputs executions known alone status" to build-sanitize/fuzz-work/TARGET.counts.
fuzz_target() {
  local target=$1
  # A copy, not the build's file through the link: the kernel names a mapped binary by its real
  # path (/proc/self/maps, /proc/self/exe), which ASan reads into its heap at start-up, so a
  # linked binary still carried the checkout's path into every process (docs/robustness.md,
  # "Sanitizers and fuzzing in CI").
  mkdir -p "$stage/bin" && cp "$stage/b/tests/fuzz/$target" "$stage/bin/$target"
  binary=$stage/bin/$target
  work=$stage/b/fuzz-work/$target
  rm -rf "$work" && mkdir -p "$work/empty"
  target_status=0 known=0 alone=0 target_start=$SECONDS

  # a. The regression replay: one process over every input; when an input stops it, that
  # input is classified and the replay goes on in a new process with the inputs after it.
  mapfile -t inputs < <(fuzz_regression_inputs "$target" | sed "s|^$root/|$stage/r/|")
  mapfile -t pending < <(printf '%s\n' "${inputs[@]}" | execution_order)
  passed=() round=0
  while [ "${#pending[@]}" -gt 0 ]; do
    round=$((round + 1))
    out=$work/replay-$round && mkdir -p "$out"
    write_list "$out/inputs.txt" "${pending[@]}"
    rc=0
    fuzz_run "$binary" -runs=0 "${fuzz_limits[@]}" "${deterministic_flags[@]}" -artifact_prefix="$out/" \
      -seed_inputs=@"$out/inputs.txt" "$work/empty" >"$out/log.txt" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ] || judge_exit_leak "$out/log.txt" "$rc"; then
      passed+=("${pending[@]}") pending=()
      break
    fi
    saved=$(saved_input "$out")
    stopped_at=-1
    if [ -n "$saved" ]; then
      sha=$(sha1sum <"$saved" | cut -d' ' -f1)
      for i in "${!pending[@]}"; do
        if [ "$(sha1sum <"${pending[$i]}" | cut -d' ' -f1)" = "$sha" ]; then stopped_at=$i && break; fi
      done
    fi
    if [ "$stopped_at" -lt 0 ]; then  # no input saved, or one that is none of the inputs
      echo "fuzz:   FINDING: the replay stopped (exit code $rc) on no regression input: $(relative "$out/log.txt")"
      target_status=1 status=1
      break
    fi
    passed+=("${pending[@]:0:stopped_at}")
    fuzz_classify "$binary" "${pending[$stopped_at]}" "$out/alone.txt"
    record "$fuzz_class" "$fuzz_where" "$(relative "${pending[$stopped_at]}")" "$out/alone.txt"
    pending=("${pending[@]:stopped_at+1}")
  done
  echo "fuzz: $target: regression: ${#inputs[@]} inputs replayed in $round process(es): ${#passed[@]} pass," \
    "$known known libhdf5 defect(s), $alone not reproducible alone ($((SECONDS - target_start)) s)"
  replay_known=$known replay_alone=$alone

  # b. Fuzzing: -runs=N from -seed=1. A known libhdf5 defect or an input that reproduces
  # nothing alone ends a libFuzzer process early; fuzzing then goes on in a new process with
  # the next seed and the units found so far, until N executions are done.
  fuzz_start=$SECONDS
  runs=$((fuzz_runs[$target] * runs_percent / 100))
  done_runs=0 restart=0 stats=""
  seeds=("${passed[@]}")
  while [ "$target_status" -eq 0 ] && [ "$done_runs" -lt "$runs" ]; do
    out=$work/fuzz-$restart && mkdir -p "$out/corpus"
    write_list "$out/seeds.txt" "${seeds[@]}"
    rc=0
    fuzz_run "$binary" -seed=$((1 + restart)) -runs=$((runs - done_runs)) "${fuzz_limits[@]}" "${deterministic_flags[@]}" \
      -artifact_prefix="$out/" -seed_inputs=@"$out/seeds.txt" "$out/corpus" >"$out/log.txt" 2>&1 || rc=$?
    executed=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$out/log.txt" | tail -1 | grep -Eo '[0-9]+$' || echo 0)
    done_runs=$((done_runs + executed))
    stats=$(stats_of "$out/log.txt")
    if [ "$rc" -eq 0 ] || judge_exit_leak "$out/log.txt" "$rc"; then break; fi
    saved=$(saved_input "$out")
    if [ -z "$saved" ]; then
      echo "fuzz:   FINDING: libFuzzer exit code $rc without a saved input: $(relative "$out/log.txt")"
      target_status=1 status=1
      break
    fi
    fuzz_classify "$binary" "$saved" "$out/alone.txt"
    record "$fuzz_class" "$fuzz_where" "$(relative "$saved")" "$out/alone.txt"
    [ "$fuzz_class" = finding ] && break
    if [ "$restart" -ge "$max_restarts" ]; then
      echo "fuzz:   stopped after $max_restarts restarts"
      break
    fi
    restart=$((restart + 1))
    mapfile -t found < <(find "$work"/fuzz-*/corpus -type f | LC_ALL=C sort)
    seeds=("${passed[@]}" "${found[@]}")
  done
  echo "fuzz: $target: fuzzing: -seed=1 -runs=$runs: $done_runs executions in $((restart + 1)) process(es)," \
    "${stats:-no stats}: $((known - replay_known)) known libhdf5 defect(s), $((alone - replay_alone)) not" \
    "reproducible alone ($((SECONDS - fuzz_start)) s)"
  if [ "$target_status" -eq 0 ]; then
    echo "fuzz: $target: no finding in dgq"
  else
    echo "fuzz: $target: FINDING in dgq (inputs and logs in $(relative "$work"))"
  fi
  echo "${#inputs[@]} $done_runs $known $alone $target_status" >"$build/fuzz-work/$target.counts"
}

# The targets run side by side, DGQ_FUZZ_LANES at a time (default: JOBS), each libFuzzer process
# on one core as before: what a run does depends on its inputs, seed and flags, not on what runs
# beside it (the deadlines above are far from any input's time). Each target's lines are kept
# in its folder and printed in the targets' order, so the output is the same as one by one.
lanes=${DGQ_FUZZ_LANES:-$jobs}
((lanes >= 1)) || lanes=1
mkdir -p "$build/fuzz-work"
running=0
for target in "${targets[@]}"; do
  rm -f "$build/fuzz-work/$target.counts"
  if ((running >= lanes)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_target "$target" >"$build/fuzz-work/$target.log" 2>&1 &
  running=$((running + 1))
done
wait || true
for target in "${targets[@]}"; do
  cat "$build/fuzz-work/$target.log"
  if ! read -r inputs runs known alone target_status <"$build/fuzz-work/$target.counts"; then
    echo "fuzz: $target: FINDING: the stage stopped before it counted (log above)"
    status=1
    continue
  fi
  total_inputs=$((total_inputs + inputs)) total_runs=$((total_runs + runs))
  total_known=$((total_known + known)) total_alone=$((total_alone + alone))
  ((target_status == 0)) || status=1
done
verdict="no finding in dgq"
[ "$status" -eq 0 ] || verdict="FINDING in dgq"
echo "fuzz: ${#targets[@]} targets, $total_inputs regression inputs, $total_runs fuzzing executions: $verdict;" \
  "$total_known known libhdf5 defect(s), $total_alone input(s) not reproducible alone"
echo "sanitize: done in $(elapsed)"
exit $status

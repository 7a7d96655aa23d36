#!/usr/bin/env bash
# Exploratory fuzzing, by hand (not run in CI; CI's fuzz stage is the deterministic one in
# tools/sanitize-and-fuzz.sh): every target (or the ones named) in the ASan + UBSan build for
# DGQ_FUZZ_SECONDS each, in libFuzzer's fork mode (each job with its own random seed, going on
# past crashes, leaks and timeouts), seeded with the target's regression inputs.
# Every input it saves is run again alone and classified by the same rule as in CI
# (tools/fuzz-classify.sh: FINDING in dgq / known libhdf5 defect / not reproducible alone),
# minimized (libFuzzer's -minimize_crash, kept only when the smaller input is classified the
# same way, at the same frame), and the crash, leak and out-of-memory inputs of the first two
# classes (one per target and deciding frame, the smallest) are copied into
# tests/fuzz/corpus/<target>/ under their sha1, where CI replays them from then on. Inputs that
# run out of time (CPU budget or timeout) are printed, not copied: each would cost CI its whole
# budget twice. It prints every input it added; review and commit them (a FINDING added there
# fails CI until dgq is fixed).
# Usage: tools/fuzz-explore.sh [TARGET...]   (default: all, tools/fuzz-common.sh)
# Knobs: DGQ_FUZZ_SECONDS (300 per target), DGQ_FUZZ_JOBS (1 parallel fork-mode job),
# DGQ_FUZZ_SEED (random: the parent's seed, printed), DGQ_FUZZ_MINIMIZE_SECONDS (60 per input),
# DGQ_FUZZ_TIMEOUT (10 s of wall-clock time per input while exploring), DGQ_FUZZ_CPU_SECONDS
# (5, tools/fuzz-common.sh), DGQ_SANITIZE_BUILD_DIR (build-sanitize),
# DGQ_JOBS (nproc, for the build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${DGQ_SANITIZE_BUILD_DIR:-build-sanitize}
seconds=${DGQ_FUZZ_SECONDS:-300}
fork_jobs=${DGQ_FUZZ_JOBS:-1}
seed=${DGQ_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
minimize_seconds=${DGQ_FUZZ_MINIMIZE_SECONDS:-60}
fuzz_timeout=${DGQ_FUZZ_TIMEOUT:-10}
source tools/fuzz-common.sh
source tools/fuzz-classify.sh
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${fuzz_targets[@]}")
enter_fuzz_stage "$build"  # the same build folder as CI's stage, configured the same way
sanitize_build "$build" "${DGQ_JOBS:-$(nproc)}" "${targets[@]}"
echo "explore: ${#targets[@]} target(s), $seconds s each, $fork_jobs fork-mode job(s), -seed=$seed"

relative() { echo "${1#"$root"/}"; }
added_total=0 findings_total=0
for target in "${targets[@]}"; do
  binary=$(realpath "$build/tests/fuzz/$target")
  work=$(realpath -m "$build/fuzz-explore/$target")
  rm -rf "$work" && mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts" "$work/minimized"
  # Fork mode reads folders only (no -seed_inputs): the regression inputs are copied.
  fuzz_regression_inputs "$target" | while IFS= read -r input; do
    cp "$input" "$work/seeds/$(sha1sum <"$input" | cut -d' ' -f1)"
  done
  rc=0
  fuzz_run "$binary" -fork="$fork_jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
    -seed="$seed" "${fuzz_limits[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" \
    >"$work/log.txt" 2>&1 || rc=$?
  executions=$(grep -Eo '^#[0-9]+' "$work/log.txt" | tail -1 | tr -d '#' || true)
  echo "explore: $target: ${executions:-?} executions, libFuzzer exit code $rc, log $(relative "$work/log.txt")"

  # Classify, minimize, keep the smallest crash input per class and deciding frame.
  declare -A keep=()
  counts_finding=0 counts_libhdf5=0 counts_alone=0
  for input in "$work"/artifacts/{crash,leak,timeout,oom}-*; do
    [ -e "$input" ] || continue
    fuzz_classify "$binary" "$input" "$input.alone.txt"
    class=$fuzz_class where=$fuzz_where
    case $class in
      finding) counts_finding=$((counts_finding + 1)) ;;
      libhdf5) counts_libhdf5=$((counts_libhdf5 + 1)) ;;
      *) counts_alone=$((counts_alone + 1)) ;;
    esac
    echo "explore:   $class: $(relative "$input") ($where)"
    [ "$class" = not-reproducible ] && continue
    [ "$fuzz_hang" = 1 ] && continue
    small=$work/minimized/$(basename "$input")
    fuzz_run "$binary" -minimize_crash=1 -max_total_time="$minimize_seconds" "${fuzz_limits[@]}" \
      -exact_artifact_path="$small" "$input" >"$small.log.txt" 2>&1 || true
    if [ -s "$small" ] && [ "$(stat -c %s "$small")" -lt "$(stat -c %s "$input")" ]; then
      fuzz_classify "$binary" "$small" "$small.alone.txt"
      if [ "$fuzz_class" = "$class" ] && [ "$fuzz_where" = "$where" ]; then
        echo "explore:     minimized: $(stat -c %s "$input") -> $(stat -c %s "$small") bytes"
        input=$small
      fi
    fi
    key="$class $where"
    if [ -z "${keep[$key]:-}" ] || [ "$(stat -c %s "$input")" -lt "$(stat -c %s "${keep[$key]}")" ]; then
      keep[$key]=$input
    fi
  done
  echo "explore: $target: $counts_finding FINDING(s) in dgq, $counts_libhdf5 known libhdf5 defect(s)," \
    "$counts_alone not reproducible alone"
  findings_total=$((findings_total + counts_finding))

  corpus=$root/tests/fuzz/corpus/$target
  mkdir -p "$corpus"
  for key in "${!keep[@]}"; do
    input=${keep[$key]}
    name=$(sha1sum <"$input" | cut -d' ' -f1)
    [ -e "$corpus/$name" ] && continue
    cp "$input" "$corpus/$name"
    added_total=$((added_total + 1))
    echo "explore:   added $(relative "$corpus/$name") ($(stat -c %s "$input") bytes; ${key%% *}: ${key#* })"
  done
  unset keep
done
echo "explore: done: $added_total input(s) added to tests/fuzz/corpus, $findings_total FINDING(s) in dgq"

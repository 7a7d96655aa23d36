#!/usr/bin/env bash
# One-shot GPU verdict (docs/cuda.md): configure for one architecture with vendored headers
# and no HDF5, build, run the differential suite, the GPU benchmark and the reference tests,
# and write OUTDIR/report.md + OUTDIR/report.json. On the H200 it took 64-93 s (2026-12-04, build with 16 jobs included).
#
#   tools/gpu-check.sh OUTDIR     (env: DGQ_GPU_ARCH=90, DGQ_VENDOR=.vendor, JOBS=nproc,
#                                  DGQ_COMMIT=<hash> where the tree travels without .git,
#                                  DGQ_DEADLINE_S=480: optional steps start only before it)
#
# The machine needs nvcc, cmake and a C++ compiler; Eigen, CLI11 and Catch2 come from
# DGQ_VENDOR (tools/vendor-headers.sh makes it where Debian's packages exist). With no device
# the differential suite reports "skipped" and so does this report.
#
# OUTDIR receives at most five files (report.md, report.json, test_gpu.log, details.log and,
# with the CLI bundle, cli-check.md): the device tool brings back only a few.
# With .gpubundle/dgq-bundle.tar.xz (tools/gpu-bundle.sh, carried along) the dgq CLI's
# --device cuda is compared with --device cpu on the shipped traces (tools/gpu-cli-check.sh). Full logs stay in build-gpu-check/gpu-check-logs/.
# The report is rewritten after every step, so a run cut short still leaves one.
# Order: the GPU work first (build test_gpu + dgq-bench, differential suite, benchmark), then
# the CPU-only reference tests, so a slow or broken reference build cannot cost the GPU verdict.
# A device is lent for minutes, so one run must say as much as it can: when the suite fails or
# crashes, every test case is rerun alone (a crash in one must not hide the verdict of the
# others), and compute-sanitizer's memcheck runs the cheap cases (an out-of-bounds access that
# happens to leave the bytes right is still a bug). Both are bounded by DGQ_DEADLINE_S.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/gpu-check}"
arch="${DGQ_GPU_ARCH:-90}"
vendor="${DGQ_VENDOR:-.vendor}"
jobs="${JOBS:-$(nproc)}"
build="build-gpu-check"
deadline="${DGQ_DEADLINE_S:-480}"
mkdir -p "$out" "$build/gpu-check-logs"
out="$(cd "$out" && pwd)"
logs="$(cd "$build/gpu-check-logs" && pwd)"
details="$out/details.log"
: > "$details"
started=$(date +%s)
log() { echo "gpu-check: $*" | tee -a "$details"; }
# The last lines of a log, into details.log (for failures the device tool cannot return whole).
tail_into_details() { { echo "---- last $2 lines of $(basename "$1")"; tail -n "$2" "$1" 2>/dev/null; echo "----"; } >> "$details"; }

if [ -n "${DGQ_COMMIT:-}" ]; then commit="$DGQ_COMMIT"
elif commit="$(git rev-parse HEAD 2>/dev/null)"; then git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
else commit="unknown (no .git; pass DGQ_COMMIT)"; fi
date_utc="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

configure_ok=false; gpu_build_ok=false; ref_build_ok=false
gpu_rc=-1; gpu_summary="not run"; ref_summary="not run"; bench_rc=-1; mismatches=0
cases_summary="not needed (the suite passed)"; memcheck_summary="not run"
cli_summary="not run (no .gpubundle/dgq-bundle.tar.xz: tools/gpu-bundle.sh)"
device="none"; driver="none"

elapsed_s() { echo $(( $(date +%s) - started )); }
time_left_for() { [ $(( $(elapsed_s) + $1 )) -le "$deadline" ]; }
# Catch2 v2 reads ',' '[' ']' and '\' in a test spec as syntax: escape them to name one case.
catch_name() { sed -e 's/[][,\\]/\\&/g'; }

json_escape() { sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr -d '\n'; }
write_report() {
  local elapsed=$(elapsed_s)
  {
    echo "# GPU check"
    echo
    echo "- date: $date_utc"
    echo "- commit: $commit"
    echo "- device: ${device:-none} (driver ${driver:-none}), built for sm_$arch"
    echo "- configure: $configure_ok; build of test_gpu + dgq-bench: $gpu_build_ok; build of test_reference: $ref_build_ok"
    echo "- differential suite (reference vs CUDA, exact bytes): $gpu_summary (exit $gpu_rc)"
    echo "- mismatches reported: $mismatches"
    echo "- test cases run one by one: $cases_summary"
    echo "- compute-sanitizer memcheck: $memcheck_summary"
    echo "- dgq CLI, --device cuda against cpu (compress and replay, shipped traces): $cli_summary"
    echo "- reference tests: ${ref_summary:-not run}"
    echo "- wall time: ${elapsed} s"
    echo
    echo "## Benchmark (dgq-bench --device cuda, exit $bench_rc)"
    echo
    cat "$logs/bench.txt" 2>/dev/null || echo "not run"
    if [ "$mismatches" != 0 ]; then
      echo; echo "## Mismatches"; echo; grep 'reproducer:' "$out/test_gpu.log" | head -20 | sed 's/^/    /'
    fi
  } > "$out/report.md.partial" && mv "$out/report.md.partial" "$out/report.md"
  {
    echo "{"
    echo "  \"date\": \"$date_utc\","
    echo "  \"commit\": \"$(echo "$commit" | json_escape)\","
    echo "  \"device\": \"$(echo "${device:-none}" | json_escape)\","
    echo "  \"driver\": \"$(echo "${driver:-none}" | json_escape)\","
    echo "  \"arch\": \"sm_$arch\","
    echo "  \"configure_ok\": $configure_ok,"
    echo "  \"gpu_build_ok\": $gpu_build_ok,"
    echo "  \"reference_build_ok\": $ref_build_ok,"
    echo "  \"differential_exit\": $gpu_rc,"
    echo "  \"differential\": \"$(echo "$gpu_summary" | json_escape)\","
    echo "  \"mismatches\": $mismatches,"
    echo "  \"cases_one_by_one\": \"$(echo "$cases_summary" | json_escape)\","
    echo "  \"memcheck\": \"$(echo "$memcheck_summary" | json_escape)\","
    echo "  \"cli_check\": \"$(echo "$cli_summary" | json_escape)\","
    echo "  \"reference_tests\": \"$(echo "${ref_summary:-not run}" | json_escape)\","
    echo "  \"bench_exit\": $bench_rc,"
    if [ -s "$logs/bench.json" ]; then echo "  \"bench\": $(cat "$logs/bench.json"),"; else echo "  \"bench\": null,"; fi
    echo "  \"wall_seconds\": $elapsed"
    echo "}"
  } > "$out/report.json.partial" && mv "$out/report.json.partial" "$out/report.json"
}

if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi > "$logs/nvidia-smi.txt" 2>&1
  device="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
fi
log "device: ${device:-none}, driver: ${driver:-none}; nvcc: $(command -v nvcc || echo 'not on PATH'); cmake: $(cmake --version | head -1)"

if [ ! -d "$vendor/eigen3" ]; then
  if [ -d /usr/include/eigen3 ]; then tools/vendor-headers.sh "$vendor" >> "$details" 2>&1
  else log "no vendored headers at $vendor and none in /usr/include: run tools/vendor-headers.sh where they exist"; write_report; exit 2; fi
fi

log "configure (sm_$arch, vendored headers, no HDF5)"
if cmake -S . -B "$build" -DDGQ_VENDOR_DIR="$PWD/$vendor" -DDGQ_HDF5=OFF -DDGQ_CUDA=ON \
     -DCMAKE_CUDA_ARCHITECTURES="$arch" -DDGQ_TESTS=ON -DDGQ_BENCH=ON > "$logs/configure.log" 2>&1; then
  configure_ok=true
else
  log "configure FAILED"; tail_into_details "$logs/configure.log" 40
fi
write_report

if [ "$configure_ok" = true ]; then
  log "build test_gpu and dgq-bench (-j$jobs)"
  if cmake --build "$build" -j"$jobs" --target test_gpu dgq-bench > "$logs/build-gpu.log" 2>&1; then gpu_build_ok=true
  else log "build FAILED"; grep -E 'error|Error' "$logs/build-gpu.log" | head -30 >> "$details"; tail_into_details "$logs/build-gpu.log" 30; fi
  log "build done at $(elapsed_s) s"
  write_report
fi

if [ "$gpu_build_ok" = true ]; then
  log "differential suite"
  rm -f "$build"/gpu-mismatch-*
  # This script runs where a GPU is meant to be: a missing device fails instead of skipping.
  DGQ_GPU_REQUIRED=1 timeout 200 "$build/tests/gpu/test_gpu" > "$out/test_gpu.log" 2>&1; gpu_rc=$?
  case $gpu_rc in
    0) gpu_summary="passed: $(grep -E 'All tests passed' "$out/test_gpu.log" | tail -1)";;
    77) gpu_summary="skipped: $(grep -E '^SKIP' "$out/test_gpu.log" | tail -1)";;
    124) gpu_summary="TIMED OUT after 200 s";;
    *) gpu_summary="FAILED: $(grep -E '^FAIL|test cases:' "$out/test_gpu.log" | tail -1)";;
  esac
  mismatches=$(grep -c 'reproducer:' "$out/test_gpu.log" 2>/dev/null || true)
  mismatches=${mismatches:-0}
  for f in $(ls "$build"/gpu-mismatch-*.txt 2>/dev/null | head -3); do
    { echo "---- $(basename "$f")"; cat "$f"; } >> "$details"
  done
  log "differential suite: $gpu_summary ($(elapsed_s) s)"
  write_report

  if [ $gpu_rc -ne 0 ] && [ $gpu_rc -ne 77 ]; then
    log "the suite failed: every test case alone"
    passed=0; failed=0; crashed=0; not_run=0; failed_names=""
    while IFS= read -r name; do
      [ -n "$name" ] || continue
      if ! time_left_for 60; then not_run=$((not_run + 1)); continue; fi
      timeout 120 "$build/tests/gpu/test_gpu" "$(printf '%s' "$name" | catch_name)" > "$logs/case.log" 2>&1; rc=$?
      if [ $rc -eq 0 ]; then passed=$((passed + 1))
      elif grep -qE 'test cases:.*failed' "$logs/case.log"; then failed=$((failed + 1)); failed_names="$failed_names; $name"
        tail_into_details "$logs/case.log" 25
      else crashed=$((crashed + 1)); failed_names="$failed_names; $name (exit $rc)"; tail_into_details "$logs/case.log" 25; fi
      echo "case exit $rc: $name" >> "$details"
    done < <(DGQ_GPU_REQUIRED=1 "$build/tests/gpu/test_gpu" --list-test-names-only 2>/dev/null | grep -E '^gpu:|^  ' | sed 's/^ *//')
    cases_summary="$passed passed, $failed failed, $crashed crashed or timed out, $not_run not run (deadline)${failed_names}"
    log "cases one by one: $cases_summary"
    write_report
  fi

  log "benchmark (dgq-bench --device cuda --json)"
  timeout 90 "$build/bench/dgq-bench" --device cuda --json "$logs/bench.json" > "$logs/bench.txt" 2>&1; bench_rc=$?
  log "benchmark exit code $bench_rc ($(elapsed_s) s)"
  [ $bench_rc -eq 0 ] || tail_into_details "$logs/bench.txt" 20
  write_report

  if [ -f .gpubundle/dgq-bundle.tar.xz ] && time_left_for 120; then
    log "dgq CLI: --device cuda against --device cpu (tools/gpu-cli-check.sh)"
    timeout 120 tools/gpu-cli-check.sh "$out" > "$logs/cli-check.log" 2>&1; cli_rc=$?
    cli_summary="$(tail -1 "$logs/cli-check.log") (exit $cli_rc; cli-check.md)"
    [ $cli_rc -eq 0 ] || tail_into_details "$logs/cli-check.log" 20
    log "CLI check: $cli_summary ($(elapsed_s) s)"
    write_report
  elif [ -f .gpubundle/dgq-bundle.tar.xz ]; then
    cli_summary="skipped (deadline ${deadline} s)"
  fi
fi

if [ "$gpu_build_ok" = true ] && command -v compute-sanitizer > /dev/null 2>&1; then
  if time_left_for 150; then
    log "compute-sanitizer memcheck on the cheap cases"
    memcheck_cases='[errors],[device],[decode_attention],[scheme],gpu: empty and single-token tensors match the reference'
    timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 \
      "$build/tests/gpu/test_gpu" "$memcheck_cases" > "$logs/memcheck.log" 2>&1; mc_rc=$?
    case $mc_rc in
      0) memcheck_summary="clean on $memcheck_cases: $(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1)";;
      99) memcheck_summary="ERRORS: $(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1)"; tail_into_details "$logs/memcheck.log" 60;;
      124) memcheck_summary="timed out after 150 s (cases: $memcheck_cases)"; tail_into_details "$logs/memcheck.log" 10;;
      *) memcheck_summary="exit $mc_rc: $(grep -E 'ERROR SUMMARY|test cases:' "$logs/memcheck.log" | tail -2 | tr '\n' ' ')"; tail_into_details "$logs/memcheck.log" 40;;
    esac
  else memcheck_summary="skipped (deadline ${deadline} s)"; fi
  log "memcheck: $memcheck_summary ($(elapsed_s) s)"
  write_report
fi

if [ "$configure_ok" = true ] && ! time_left_for 90; then
  ref_summary="skipped (deadline ${deadline} s; CI runs them on every commit)"
elif [ "$configure_ok" = true ]; then
  log "build test_reference (-j$jobs)"
  if cmake --build "$build" -j"$jobs" --target test_reference > "$logs/build-reference.log" 2>&1; then ref_build_ok=true
  else log "reference build FAILED"; tail_into_details "$logs/build-reference.log" 30; fi
  if [ "$ref_build_ok" = true ]; then
    log "reference tests (ctest -L reference)"
    (cd "$build" && timeout 90 ctest -L reference -j"$jobs" --output-on-failure) > "$logs/ctest_reference.log" 2>&1
    ref_summary="$(grep -E 'tests passed' "$logs/ctest_reference.log" | tail -1)"
    log "reference tests: ${ref_summary:-no summary} ($(elapsed_s) s)"
    grep -E 'tests passed' "$logs/ctest_reference.log" | grep -qv ' 0 tests failed' && tail_into_details "$logs/ctest_reference.log" 40
  fi
fi

write_report
log "report: $out/report.md, $out/report.json"
[ "$gpu_build_ok" = true ] && { [ $gpu_rc -eq 0 ] || [ $gpu_rc -eq 77 ]; }

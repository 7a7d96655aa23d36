#!/usr/bin/env bash
# One-shot GPU verdict (docs/cuda.md): configure for one architecture with vendored headers
# and no HDF5, build, run the differential suite, the reference tests and the GPU benchmark,
# and write OUTDIR/report.md + OUTDIR/report.json. Meant to finish in ~5 minutes on an H200.
#
#   tools/gpu-check.sh OUTDIR            (env: DGQ_GPU_ARCH=90, DGQ_VENDOR=.vendor, JOBS=nproc)
#
# The machine needs nvcc, cmake and a C++ compiler; Eigen, CLI11 and Catch2 come from
# DGQ_VENDOR (tools/vendor-headers.sh makes it where Debian's packages exist). With no device
# the differential suite reports "skipped" and so does this report.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/gpu-check}"
arch="${DGQ_GPU_ARCH:-90}"
vendor="${DGQ_VENDOR:-.vendor}"
jobs="${JOBS:-$(nproc)}"
build="build-gpu-check"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log() { echo "gpu-check: $*" | tee -a "$out/steps.log"; }
: > "$out/steps.log"
started=$(date +%s)

if [ ! -d "$vendor/eigen3" ]; then
  if [ -d /usr/include/eigen3 ]; then tools/vendor-headers.sh "$vendor" >> "$out/steps.log" 2>&1
  else log "no vendored headers at $vendor and none in /usr/include: run tools/vendor-headers.sh where they exist"; exit 2; fi
fi

log "configure (sm_$arch, vendored headers, no HDF5)"
if ! cmake -S . -B "$build" -DDGQ_VENDOR_DIR="$PWD/$vendor" -DDGQ_HDF5=OFF -DDGQ_CUDA=ON \
     -DCMAKE_CUDA_ARCHITECTURES="$arch" -DDGQ_TESTS=ON -DDGQ_BENCH=ON > "$out/configure.log" 2>&1; then
  log "configure FAILED (see configure.log)"; build_ok=false
else
  log "build (-j$jobs)"
  if cmake --build "$build" -j"$jobs" > "$out/build.log" 2>&1; then build_ok=true
  else log "build FAILED (see build.log)"; build_ok=false; fi
fi

device="none"; driver="none"
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  device="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
else
  echo "nvidia-smi not found" > "$out/nvidia-smi.txt"
fi
log "device: ${device:-none}, driver: ${driver:-none}"

gpu_rc=-1; gpu_summary="not run"; ref_summary="not run"; bench_rc=-1
if [ "$build_ok" = true ]; then
  log "differential suite"
  rm -f "$build"/gpu-mismatch-*
  timeout 240 "$build/tests/gpu/test_gpu" > "$out/test_gpu.log" 2>&1; gpu_rc=$?
  case $gpu_rc in
    0) gpu_summary="passed: $(grep -E 'All tests passed' "$out/test_gpu.log" | tail -1)";;
    77) gpu_summary="skipped: $(grep -E '^SKIP' "$out/test_gpu.log" | tail -1)";;
    124) gpu_summary="TIMED OUT after 240 s";;
    *) gpu_summary="FAILED: $(grep -E 'test cases:' "$out/test_gpu.log" | tail -1)";;
  esac
  cp "$build"/gpu-mismatch-* "$out/" 2>/dev/null
  log "differential suite: $gpu_summary"

  log "reference tests (ctest -L reference)"
  (cd "$build" && timeout 120 ctest -L reference -j"$jobs" --output-on-failure) > "$out/ctest_reference.log" 2>&1
  ref_summary="$(grep -E 'tests passed' "$out/ctest_reference.log" | tail -1)"
  log "reference tests: ${ref_summary:-no summary (see ctest_reference.log)}"

  if [ -x "$build/bench/dgq-bench" ]; then
    log "benchmark (dgq-bench --device cuda --json)"
    timeout 120 "$build/bench/dgq-bench" --device cuda --json "$out/bench.json" > "$out/bench.txt" 2>&1; bench_rc=$?
    log "benchmark exit code $bench_rc"
  else
    echo "dgq-bench was not built" > "$out/bench.txt"
    log "dgq-bench was not built"
  fi
fi

mismatches=$(grep -c 'reproducer:' "$out/test_gpu.log" 2>/dev/null || true)
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '+dirty')"
date_utc="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
elapsed=$(( $(date +%s) - started ))
json_escape() { sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr -d '\n'; }

{
  echo "# GPU check"
  echo
  echo "- date: $date_utc"
  echo "- commit: $commit"
  echo "- device: ${device:-none} (driver ${driver:-none}), built for sm_$arch"
  echo "- build: $([ "$build_ok" = true ] && echo ok || echo FAILED)"
  echo "- differential suite (reference vs CUDA, exact bytes): $gpu_summary (exit $gpu_rc)"
  echo "- mismatches reported: ${mismatches:-0}"
  echo "- reference tests: ${ref_summary:-not run}"
  echo "- wall time: ${elapsed} s"
  echo
  echo "## Benchmark (dgq-bench --device cuda, exit $bench_rc)"
  echo
  cat "$out/bench.txt" 2>/dev/null
  if [ "${mismatches:-0}" != 0 ]; then
    echo; echo "## Mismatches"; echo; grep 'reproducer:' "$out/test_gpu.log" | head -20 | sed 's/^/    /'
  fi
} > "$out/report.md"

{
  echo "{"
  echo "  \"date\": \"$date_utc\","
  echo "  \"commit\": \"$commit\","
  echo "  \"device\": \"$(echo "${device:-none}" | json_escape)\","
  echo "  \"driver\": \"$(echo "${driver:-none}" | json_escape)\","
  echo "  \"arch\": \"sm_$arch\","
  echo "  \"build_ok\": $build_ok,"
  echo "  \"differential_exit\": $gpu_rc,"
  echo "  \"differential\": \"$(echo "$gpu_summary" | json_escape)\","
  echo "  \"mismatches\": ${mismatches:-0},"
  echo "  \"reference_tests\": \"$(echo "${ref_summary:-not run}" | json_escape)\","
  echo "  \"bench_exit\": $bench_rc,"
  if [ -s "$out/bench.json" ]; then echo "  \"bench\": $(cat "$out/bench.json"),"; else echo "  \"bench\": null,"; fi
  echo "  \"wall_seconds\": $elapsed"
  echo "}"
} > "$out/report.json"
log "report: $out/report.md, $out/report.json"
[ "$build_ok" = true ] && { [ $gpu_rc -eq 0 ] || [ $gpu_rc -eq 77 ]; }

#!/usr/bin/env bash
# The test command (README, .ci/run): set up, build, check the C++ format (tools/check-format.sh)
# and the Python (tools/lint-python.sh), run every test.
# GPU tests (label gpu) are reported as skipped when no CUDA device is present.
#
# The sanitizer build (clang, ASan + UBSan, build-sanitize/) compiles while ctest runs the
# Release tests: ctest leaves a core idle for long stretches (pytest, the quick experiments and
# the Slurm tests run one process each), so the two overlap instead of queueing (the gain was not
# timed alone; docs/robustness.md, "How long CI takes", has the runs). The build's output goes to
# build/sanitize-build.log and is printed after ctest; a failure of either fails the command. The
# tests' deadlines are either for loops that never end or far above what this load makes of a run,
# so the build's load does not change a verdict (three fresh-clone runs agreed).
set -euo pipefail
cd "$(dirname "$0")/.."
# dgq.hf's tests (ctest python:hf) need torch and transformers (tools/requirements-hf.txt, about
# 5.3 GB, under 2 min to install beside the build): installed here, and then a missing one is a
# failure of python:hf, not a skip.
export DGQ_HF="${DGQ_HF:-1}" DGQ_HF_REQUIRED="${DGQ_HF_REQUIRED:-1}"
tools/setup.sh
# The C++/CUDA format and the Python's lint, format and types (seconds): a finding fails CI
# before any test runs.
tools/check-format.sh
if [ "${DGQ_SKIP_PYTHON:-0}" != 1 ]; then
  tools/lint-python.sh
fi
BUILD_DIR="${DGQ_BUILD_DIR:-build}"
JOBS="${DGQ_JOBS:-$(nproc)}"
sanitize=1
[ "${DGQ_SKIP_SANITIZE:-0}" != 1 ] || sanitize=0

if ((sanitize)); then
  DGQ_SANITIZE_BUILD_ONLY=1 tools/sanitize-and-fuzz.sh >"$BUILD_DIR/sanitize-build.log" 2>&1 &
  sanitize_build_pid=$!
fi
ctest_rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" || ctest_rc=$?
if ((sanitize)); then
  build_rc=0
  wait "$sanitize_build_pid" || build_rc=$?
  if ((build_rc)); then
    cat "$BUILD_DIR/sanitize-build.log"
    echo "test: the sanitizer build failed (exit $build_rc; its output above)" >&2
    exit "$build_rc"
  fi
  grep -E "^sanitize:" "$BUILD_DIR/sanitize-build.log" || true
fi
if ((ctest_rc)); then exit "$ctest_rc"; fi
# ASan+UBSan tests and the deterministic fuzz stage (docs/robustness.md); the build is done.
if ((sanitize)); then
  tools/sanitize-and-fuzz.sh
fi

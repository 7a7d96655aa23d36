#!/usr/bin/env bash
# The test command (README, .ci/run): set up, build, run every test.
# GPU tests (label gpu) are reported as skipped when no CUDA device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
BUILD_DIR="${DGQ_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${DGQ_JOBS:-$(nproc)}"
# Issue 10: the C++ tests under ASan+UBSan and 15 s of fuzzing per reader (docs/robustness.md).
if [ "${DGQ_SKIP_SANITIZE:-0}" != 1 ]; then
  tools/sanitize-and-fuzz.sh
fi

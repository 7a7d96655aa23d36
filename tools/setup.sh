#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for dgq and builds it into build/:
#   1. Debian packages (apt-get; skipped when all are already installed),
#   2. the Python environment .venv for the exporter, notebooks and Python tests, and
#   3. CMake configure + build (CUDA is compiled when nvcc is found: DGQ_CUDA=AUTO), these two
#      side by side.
# Idempotent; rerunning only rebuilds what changed. Environment knobs:
#   DGQ_BUILD_DIR (default build), DGQ_JOBS (default nproc), DGQ_SKIP_PYTHON=1.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake pkg-config git
  libeigen3-dev libcli11-dev catch2 libhdf5-dev hdf5-tools libtomlplusplus-dev nlohmann-json3-dev libbenchmark-dev
  python3 python3-venv python3-pip)
APT_PACKAGES+=(slurm-wlm munge)  # dgq slurm: a private single-node Slurm for tests/cluster (label cluster)
APT_PACKAGES+=(clang libclang-rt-14-dev libomp-dev)  # sanitizers and fuzzing: tools/sanitize-and-fuzz.sh (ASan, UBSan, libFuzzer)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR="${DGQ_BUILD_DIR:-build}"
JOBS="${DGQ_JOBS:-$(nproc)}"
mkdir -p "$BUILD_DIR"

# The Python environment is set up while CMake builds: pip mostly waits on unpacking and one
# core, the build's link steps leave cores idle, and neither needs the other. Its output goes to
# BUILD_DIR/setup-python.log, printed when it fails.
python_pid=""
if [ "${DGQ_SKIP_PYTHON:-0}" != 1 ] && [ -x tools/setup-python.sh ]; then
  tools/setup-python.sh >"$BUILD_DIR/setup-python.log" 2>&1 &
  python_pid=$!
fi
build_rc=0
{ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${DGQ_CMAKE_ARGS:-} &&
  cmake --build "$BUILD_DIR" -j "$JOBS"; } || build_rc=$?
if [ -n "$python_pid" ]; then
  python_rc=0
  wait "$python_pid" || python_rc=$?
  if ((python_rc)); then
    cat "$BUILD_DIR/setup-python.log" >&2
    echo "setup: tools/setup-python.sh failed (exit $python_rc; its output above)" >&2
    exit "$python_rc"
  fi
  tail -n 1 "$BUILD_DIR/setup-python.log"
fi
if ((build_rc)); then
  echo "setup: the CMake build failed (exit $build_rc)" >&2
  exit "$build_rc"
fi
echo "setup: built into $BUILD_DIR"

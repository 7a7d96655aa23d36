#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for dgq and builds it into build/:
#   1. Debian packages (apt-get; skipped when all are already installed),
#   2. the Python environment .venv for the exporter, notebooks and Python tests, and
#   3. CMake configure + build (CUDA is compiled when nvcc is found: DGQ_CUDA=AUTO), these two
#      side by side.
# Idempotent; rerunning only rebuilds what changed. Environment knobs:
#   DGQ_BUILD_DIR (default build), DGQ_JOBS (default nproc), DGQ_SKIP_PYTHON=1 (no .venv and no
#   Python module).
# With Python, the module dgq (python/, docs/python.md) is built with the rest (-DDGQ_PYTHON=ON,
# against .venv's Python and nanobind) and made importable from .venv by a .pth file naming
# BUILD_DIR/python, the package as the build assembles it (an editable install, without pip
# compiling the libraries a second time).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake pkg-config git
  libeigen3-dev libcli11-dev catch2 libhdf5-dev hdf5-tools libtomlplusplus-dev nlohmann-json3-dev libicu-dev libbenchmark-dev
  libdnnl-dev)  # libdnnl-dev: oneDNN's sgemm for the forward pass's weight products (docs/eval.md, Weight products)
APT_PACKAGES+=(python3 python3-venv python3-pip python3-dev)  # python3-dev: Python.h for the module (python/)
APT_PACKAGES+=(fortunes-zh bible-kjv bible-kjv-text)  # tools/prompts.sh's texts: the demo's eval inputs (tools/make-eval-inputs.sh)
APT_PACKAGES+=(slurm-wlm munge)  # dgq slurm: a private single-node Slurm for tests/cluster (label cluster)
APT_PACKAGES+=(clang libclang-rt-14-dev libomp-dev)  # sanitizers and fuzzing: tools/sanitize-and-fuzz.sh (ASan, UBSan, libFuzzer)
APT_PACKAGES+=(clang-format-14)  # the C++/CUDA style check: tools/check-format.sh

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
python_args=()
if [ "${DGQ_SKIP_PYTHON:-0}" != 1 ] && [ -x tools/setup-python.sh ]; then
  # CMake needs nanobind when it configures, so the venv and the module's build dependencies
  # come first (seconds); the rest of the environment is installed beside the build.
  tools/setup-python.sh --build-deps
  python_args=(-DDGQ_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv/bin/python")
  tools/setup-python.sh >"$BUILD_DIR/setup-python.log" 2>&1 &
  python_pid=$!
fi
build_rc=0
{ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${python_args[@]}" ${DGQ_CMAKE_ARGS:-} &&
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
if ((${#python_args[@]})); then
  site_packages="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$(cd "$BUILD_DIR" && pwd)/python" > "$site_packages/dgq-build.pth"
  echo "setup: import dgq in .venv loads $BUILD_DIR/python/dgq (docs/python.md)"
fi
echo "setup: built into $BUILD_DIR"

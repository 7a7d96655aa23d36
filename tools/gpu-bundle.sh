#!/usr/bin/env bash
# Packs the dgq CLI built here (with CUDA) and the shared libraries it loads, glibc's aside, into
# .gpubundle/dgq-bundle.tar.xz (git-ignored), for a machine with a GPU but without Debian's
# packages (the lent H200: no HDF5, no apt). There tools/gpu-cli-check.sh unpacks it and runs
# `dgq compress` and `dgq replay` with --device cuda against --device cpu on the shipped traces.
#
#   tools/gpu-bundle.sh [BUILD_DIR]      (default build/, configured with CUDA: the CI build is)
#
# The device machine is x86-64 with a newer glibc than Debian 12's; CUDA's kernels are built for
# sm_80 with PTX in CI's configuration, which the driver compiles for sm_90 at first launch.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
dgq="$build/sim/dgq"
[ -x "$dgq" ] || { echo "gpu-bundle: $dgq is missing: build the CLI first (tools/test.sh or cmake --build $build --target dgq)" >&2; exit 1; }
readelf -d "$dgq" | grep -q 'libcudart' || { echo "gpu-bundle: $dgq was built without CUDA (DGQ_CUDA)" >&2; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/dgq-bundle/lib"
cp "$dgq" "$stage/dgq-bundle/"
# Every library the loader resolves, but glibc's own (the device's is newer and must stay its own).
ldd "$dgq" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*) ;;
    *) cp -L "$lib" "$stage/dgq-bundle/lib/" ;;
  esac
done
mkdir -p .gpubundle
tar -C "$stage" -cJf .gpubundle/dgq-bundle.tar.xz.partial dgq-bundle
mv .gpubundle/dgq-bundle.tar.xz.partial .gpubundle/dgq-bundle.tar.xz
echo "gpu-bundle: .gpubundle/dgq-bundle.tar.xz ($(du -h .gpubundle/dgq-bundle.tar.xz | cut -f1), $(ls "$stage/dgq-bundle/lib" | wc -l) libraries); carry .gpubundle to the device"

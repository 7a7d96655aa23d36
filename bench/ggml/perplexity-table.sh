#!/usr/bin/env bash
# The model runner beside llama.cpp (docs/benchmarks.md, "Against llama.cpp's llama-perplexity"):
# bench/ggml/perplexity.sh on both models, at n_ctx 1024 (2 chunks of prose) and 4096 (1 chunk of
# code), ROUNDS alternated rounds each (default 3); llama.cpp on the GGUF's own quantized weights
# (SmolLM2 Q4_1, Gemma 3 Q4_K_M), dgq eval on the same weights dequantized, fp32 arithmetic.
# Run it on an idle machine: it refuses when the 1-minute load average is over 1.0
# (DGQ_BENCH_ANY_LOAD=1 runs anyway and says so in the block).
# Usage: bench/ggml/perplexity-table.sh [--update-docs]   Needs what perplexity.sh needs
# (bench/ggml/run.sh --build-only, build/sim/dgq, .venv, models/, out/prompts, out/eval-texts).
# Prints the block; --update-docs splices it between "<!-- BEGIN llama-perplexity -->" and
# "<!-- END llama-perplexity -->" in docs/benchmarks.md.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
update=0
[ "${1:-}" = "--update-docs" ] && update=1
load="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load" 'BEGIN { exit !(l > 1.0) }' && [ "${DGQ_BENCH_ANY_LOAD:-0}" != 1 ]; then
  echo "perplexity-table: load average $load: the machine is not idle (DGQ_BENCH_ANY_LOAD=1 runs anyway)" >&2
  exit 1
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
block="$out/block.md"
{
  echo "Output of \`bench/ggml/perplexity-table.sh\` at commit $(git -C "$repo" rev-parse --short=12 HEAD)" \
    "($(date -u +%F)), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))," \
    "load average $load at the start, ${ROUNDS:-3} alternated rounds per row:"
  echo
  echo '```'
  for model in smollm2 gemma3; do
    ROUNDS="${ROUNDS:-3}" "$repo/bench/ggml/perplexity.sh" "$model" | grep -E '^(machine|result|  llama-perplexity: PPL|  dgq eval: PPL)' | awk '!seen[$0]++'
    ROUNDS="${ROUNDS:-3}" CTX=4096 CHUNKS=1 KIND=code "$repo/bench/ggml/perplexity.sh" "$model" |
      grep -E '^(machine|result|  llama-perplexity: PPL|  dgq eval: PPL)' | awk '!seen[$0]++'
  done
  echo '```'
} >"$block"
cat "$block"
if ((update)); then
  PYTHONPATH="$repo/tools" "$repo/.venv/bin/python" "$repo/tools/splice-block.py" "$repo/docs/benchmarks.md" llama-perplexity "$block"
  echo "perplexity-table: spliced into docs/benchmarks.md" >&2
fi

#!/usr/bin/env bash
# Replay throughput and peak memory (docs/replay.md, "Performance"):
#   1. every shipped trace in data/*.h5 through fp16, q8_0, dgq and kivi-2;
#   2. a Llama-3-8B-shaped synthetic trace (32 layers, 32 q heads, 8 KV heads, 128 dims,
#      32K tokens, 32 probes) through dgq, with peak RSS against one layer's K+V size.
# Usage: tools/bench-replay.sh [BUILD_DIR]   (default build-replay; needs its sim/dgq)
# Env: BENCH_DIR (default /tmp/dgq-bench; the 32K trace is ~4.3 GB and kept for reruns),
#      BENCH_LAYERS (default 32), BENCH_TOKENS (default 32768), THREADS (default 0 = all).
# Throughput is printed by dgq replay itself: tokens*heads/s = L x KV heads x layers / s,
# every scheme of the run included (divide by the scheme count for one scheme's share).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build-replay}"
dgq="$build/sim/dgq"
[ -x "$dgq" ] || { echo "bench-replay: $dgq not found; build the dgq target first" >&2; exit 1; }
bench="${BENCH_DIR:-/tmp/dgq-bench}"
layers="${BENCH_LAYERS:-32}"
tokens="${BENCH_TOKENS:-32768}"
threads="${THREADS:-0}"
mkdir -p "$bench"

# Runs a command under /usr/bin/time -v; prints its stderr lines about throughput, CPU and wall
# time and peak RSS.
measure() {
  local log="$bench/time.log"
  /usr/bin/time -v "$@" >"$bench/stdout.log" 2>"$log" || { cat "$log" >&2; return 1; }
  grep -E "tokens\*heads/s|User time|Elapsed \(wall|Maximum resident" "$log" | sed 's/^\s*/  /'
}

shopt -s nullglob
for trace in "$repo"/data/*.h5; do
  echo "== shipped trace $(basename "$trace")"
  rm -f "$bench/shipped.h5"
  measure "$dgq" replay "$trace" --scheme fp16 --scheme q8_0 --scheme dgq --scheme kivi-2 \
    --threads "$threads" -o "$bench/shipped.h5"
done

big="$bench/llama3-8b-like-L${tokens}-layers${layers}.h5"
if [ ! -f "$big" ]; then
  echo "== generating $big"
  measure "$dgq" gen-trace -o "$big" --kind code --layers "$layers" --q-heads 32 --kv-heads 8 \
    --head-dim 128 --tokens "$tokens" --probes 32 --seed 1
fi
layer_bytes=$((2 * 8 * tokens * 128 * 2))
echo "== replay of $(basename "$big") through dgq (one layer's K+V in fp16: $((layer_bytes / 1048576)) MiB)"
rm -f "$bench/big.h5"
measure "$dgq" replay "$big" --scheme dgq --threads "$threads" -o "$bench/big.h5"

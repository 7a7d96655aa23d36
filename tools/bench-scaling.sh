#!/usr/bin/env bash
# Scaling of the whole commands (docs/benchmarks.md): `dgq compress` and `dgq replay` wall time,
# CPU time and peak RSS against the context length L (1K ... 128K tokens, 2 layers x 8 KV heads
# x 128 dims) and against layers x KV heads (up to a Llama-3-8B-shaped 32 x 8 x 4096 trace).
# Prints a Markdown table (for docs/benchmarks.md) and writes it to BENCH_DIR/scaling.md, with
# the machine, the load average, the date and `dgq --version` (its commit). Not in CI (minutes,
# gigabytes of traces).
# Usage: tools/bench-scaling.sh [BUILD_DIR]   (default build; needs its sim/dgq)
# Env: BENCH_DIR (default /tmp/dgq-scaling; traces are kept for reruns), THREADS (default 1),
#      SCHEME (default dgq), LENGTHS, LAYER_COUNTS (space-separated lists).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dgq="${1:-$repo/build}/sim/dgq"
[ -x "$dgq" ] || { echo "bench-scaling: $dgq not found; build the dgq target first" >&2; exit 1; }
bench="${BENCH_DIR:-/tmp/dgq-scaling}"
threads="${THREADS:-1}"
scheme="${SCHEME:-dgq}"
lengths=(${LENGTHS:-1024 4096 16384 65536 131072})
layer_counts=(${LAYER_COUNTS:-4 8 16 32})
mkdir -p "$bench"

# trace NAME LAYERS TOKENS: a synthetic trace (8 KV heads, 32 q heads, 128 dims, 16 probes), kept.
trace() {
  local path="$bench/$1.h5"
  [ -f "$path" ] || "$dgq" gen-trace -o "$path" --layers "$2" --tokens "$3" --probes 16 --seed 7 >/dev/null
  echo "$path"
}

# measure CMD...: "wall_s cpu_s peak_MiB" of one run under /usr/bin/time.
measure() {
  local log="$bench/time.log"
  /usr/bin/time -f "%e %U %S %M" -o "$log" "$@" >/dev/null 2>"$bench/stderr.log" || { cat "$bench/stderr.log" >&2; return 1; }
  awk '{ printf "%.2f %.2f %.0f", $1, $2 + $3, $4 / 1024 }' "$log"
}

row() {  # row LABEL LAYERS TOKENS PATH
  local label="$1" layers="$2" tokens="$3" path="$4" c r layer_mib work
  rm -f "$bench/out.h5" "$bench/replay.h5"
  c=$(measure "$dgq" compress "$path" -o "$bench/out.h5" --scheme "$scheme" --threads "$threads")
  r=$(measure "$dgq" replay "$path" --scheme "$scheme" --threads "$threads" -o "$bench/replay.h5")
  layer_mib=$(( 2 * 8 * tokens * 128 * 2 / 1048576 ))  # one layer's K + V, fp16
  work=$(( layers * 8 * tokens ))                       # tokens x heads x layers
  read -r cw cc cm <<<"$c"
  read -r rw rc rm <<<"$r"
  printf '| %s | %d | %d | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n' "$label" "$layers" "$tokens" \
    "$(awk -v w="$work" 'BEGIN { print w / 1e6 }')" "$cw" "$cc" "$cm" "$(awk -v w="$work" -v t="$cw" 'BEGIN { printf "%.2f", w / t / 1e6 }')" \
    "$rw" "$rc" "$rm" "$(awk -v w="$work" -v t="$rw" 'BEGIN { printf "%.2f", w / t / 1e6 }')" "$layer_mib"
}

{
  echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Command: \`tools/bench-scaling.sh\` (scheme \`$scheme\`, --threads $threads; traces from \`dgq gen-trace\`, seed 7, fp16, as it writes them); $("$dgq" --version)."
  echo
  echo "| sweep | layers | L | work (M tokens x KV heads x layers) | compress wall s | compress CPU s | compress peak MiB | compress M/s | replay wall s | replay CPU s | replay peak MiB | replay M/s | one layer K+V MiB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for L in "${lengths[@]}"; do row "length" 2 "$L" "$(trace "L$L-layers2" 2 "$L")"; done
  for n in "${layer_counts[@]}"; do row "layers" "$n" 4096 "$(trace "L4096-layers$n" "$n" 4096)"; done
  echo
  echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$bench/scaling.md.partial"
mv "$bench/scaling.md.partial" "$bench/scaling.md"

#!/usr/bin/env bash
# The forward pass's weight products by oneDNN against Eigen (docs/benchmarks.md, "Weight
# products: oneDNN against Eigen"), both in one run of one binary:
#   speed   `dgq eval --gemm eigen` and `--gemm onednn` alternated, ROUNDS rounds (default 3), on
#           SmolLM2-135M and Gemma 3 270M at n_ctx 1024 (2 chunks) and 4096 (1 chunk), code text,
#           the fp16 base and one q8_0 cache, 2 threads: the median forward-pass tokens/s of each and their ratio;
#   logits  one chunk of 512 tokens through each library with --save-logits, the fp16 base and
#           q4_0 with rotation: KLD between the two libraries' base logits (mean, max), and each
#           library's q4_0+rotation KLD against its own base (does the cache's figure move?).
# Run it on an idle machine: it refuses when the 1-minute load average is over 1.5
# (DGQ_BENCH_ANY_LOAD=1 runs anyway and says so in the block).
# Usage: tools/bench-weight-gemm.sh [--update-docs] [BUILD_DIR]   (default build). Needs models/
# (tools/make-models.sh), out/eval-texts/ (docs/eval.md) and .venv (numpy, h5py). Prints the
# block; --update-docs splices it between "<!-- BEGIN weight-gemm -->" and "<!-- END weight-gemm -->".
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
update=0
if [ "${1:-}" = "--update-docs" ]; then
  update=1
  shift
fi
dgq="${1:-$repo/build}/sim/dgq"
python="$repo/.venv/bin/python"
rounds="${ROUNDS:-3}"
[ -x "$dgq" ] || { echo "bench-weight-gemm: $dgq not found; build the dgq target first" >&2; exit 1; }
load="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load" 'BEGIN { exit !(l > 1.5) }' && [ "${DGQ_BENCH_ANY_LOAD:-0}" != 1 ]; then
  echo "bench-weight-gemm: load average $load: the machine is not idle (DGQ_BENCH_ANY_LOAD=1 runs anyway)" >&2
  exit 1
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
declare -A files=([smollm2]=smollm2-135m [gemma3]=gemma3-270m)

# tokens/s of one forward-pass run: the number `dgq eval` prints on its "forward pass:" line.
tokens_per_second() {
  local model=$1 ctx=$2 chunks=$3 gemm=$4
  "$dgq" eval --model "$repo/models/${files[$model]}.h5" --text "$repo/out/eval-texts/$model-code-clean.h5" \
    --ctx "$ctx" --chunks "$chunks" --scheme q8_0 --gemm "$gemm" --threads 2 -q --force -o "$out/speed.h5" |
    sed -n 's/^forward pass: \([0-9.]*\) tokens\/s.*/\1/p'
}

speed_rows() {
  echo "| model | n_ctx | chunks | Eigen, tokens/s (rounds) | oneDNN, tokens/s (rounds) | oneDNN / Eigen (medians) |"
  echo "|---|---:|---:|---|---|---:|"
  for run in "smollm2 1024 2" "smollm2 4096 1" "gemma3 1024 2" "gemma3 4096 1"; do
    read -r model ctx chunks <<<"$run"
    local eigen=() onednn=()
    for ((r = 0; r < rounds; r++)); do
      eigen+=("$(tokens_per_second "$model" "$ctx" "$chunks" eigen)")
      onednn+=("$(tokens_per_second "$model" "$ctx" "$chunks" onednn)")
    done
    "$python" - "$model" "$ctx" "$chunks" "${eigen[*]}" "${onednn[*]}" <<'PY'
import statistics, sys
model, ctx, chunks, eigen, onednn = sys.argv[1:]
e, o = [float(v) for v in eigen.split()], [float(v) for v in onednn.split()]
me, mo = statistics.median(e), statistics.median(o)
print(f"| {model} | {ctx} | {chunks} | {me:.1f} ({', '.join(f'{v:.1f}' for v in e)}) "
      f"| {mo:.1f} ({', '.join(f'{v:.1f}' for v in o)}) | {mo / me:.2f}x |")
PY
  done
}

logit_rows() {
  echo "| model | KLD(Eigen base, oneDNN base) mean | max | q4_0+rotation KLD vs own base, Eigen | oneDNN | change |"
  echo "|---|---:|---:|---:|---:|---:|"
  for model in smollm2 gemma3; do
    for gemm in eigen onednn; do
      "$dgq" eval --model "$repo/models/${files[$model]}.h5" --text "$repo/out/eval-texts/$model-code-clean.h5" \
        --ctx 512 --chunks 1 --scheme q4_0:rot=hadamard --save-logits --gemm "$gemm" --threads 2 -q \
        -o "$out/$model-$gemm.h5" >/dev/null
    done
    "$python" - "$model" "$out/$model-eigen.h5" "$out/$model-onednn.h5" <<'PY'
import sys
import h5py
import numpy as np

def log_softmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))

def kld(p_logits, q_logits):
    lp, lq = log_softmax(p_logits), log_softmax(q_logits)
    return (np.exp(lp) * (lp - lq)).sum(axis=1)

model, eigen_path, onednn_path = sys.argv[1:]
with h5py.File(eigen_path) as e, h5py.File(onednn_path) as o:
    base_e, base_o = e["runs/0/logits"][()], o["runs/0/logits"][()]
    between = kld(base_e, base_o)
    cache_e = kld(base_e, e["runs/1/logits"][()]).mean()
    cache_o = kld(base_o, o["runs/1/logits"][()]).mean()
print(f"| {model} | {between.mean():.2e} | {between.max():.2e} | {cache_e:.4f} | {cache_o:.4f} "
      f"| {100 * (cache_o / cache_e - 1):+.1f} % |")
PY
  done
}

block="$out/block.md"
{
  echo "Output of \`tools/bench-weight-gemm.sh\` at commit $(git -C "$repo" rev-parse --short=12 HEAD)" \
    "($(date -u +%F)), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
    "$(grep -m1 -o 'avx512f' /proc/cpuinfo || echo 'no AVX-512')), load average $load at the start," \
    "$rounds alternated rounds:"
  echo
  speed_rows
  echo
  logit_rows
} >"$block"
cat "$block"
if ((update)); then
  doc="$repo/docs/benchmarks.md"
  PYTHONPATH="$repo/tools" "$repo/.venv/bin/python" "$repo/tools/splice-block.py" "$doc" weight-gemm "$block"
  echo "bench-weight-gemm: spliced into $doc" >&2
fi

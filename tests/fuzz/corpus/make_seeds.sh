#!/usr/bin/env bash
# Writes the generated seeds of the committed fuzz corpus, tests/fuzz/corpus/<target>/seed-*:
# small files of every kind the fuzz targets read, written by dgq itself (gen-trace, compress,
# replay, eval) and, for the model and token files, by write_seed_files.py (tools/export-model.py's
# writer). They replace the seeds tools/sanitize-and-fuzz.sh used to make on every run, so that
# the regression corpus is the same bytes on every machine. Rerun it after a change to a file
# format, check that the files stay small (a few KB to ~60 KB each), and commit the result;
# old seed-* files are removed first, inputs kept by tools/fuzz-explore.sh (named by sha1) are
# left alone. The shipped fixtures (tests/fixtures/hostile, tests/fixtures/libhdf5,
# experiments/*.toml) are not copied: the fuzz scripts read them where they are.
# Usage: tests/fuzz/corpus/make_seeds.sh [DGQ_BINARY (build/sim/dgq)] [PYTHON (.venv/bin/python)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dgq=$(realpath "${1:-$root/build/sim/dgq}")
python=${2:-$root/.venv/bin/python}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in trace compressed results sweep_toml model gguf tokens base_logits; do
  mkdir -p "$here/fuzz_$target"
  rm -f "$here/fuzz_$target"/seed-*
done

# Traces: the smallest shapes the reader and the schemes accept, f16 and f32, with noise.
"$dgq" gen-trace -o "$here/fuzz_trace/seed-f16-noise.h5" --layers 2 --q-heads 2 --kv-heads 1 --head-dim 64 \
  --tokens 32 --probes 2 --noise-rate 0.1 >/dev/null
"$dgq" gen-trace -o "$here/fuzz_trace/seed-f32.h5" --layers 1 --q-heads 1 --kv-heads 1 --head-dim 32 \
  --tokens 32 --probes 1 --dtype f32 >/dev/null

# Compressed files: one per stored layout family (codes + ranges, DGQ's markers, 4-bit groups,
# fp8, KIVI's residual window, llama.cpp blocks with a rotation, TurboQuant's codebook).
for scheme in q8_0 dgq dgq:markers=bitmap int4-group64 fp8-e4m3 kivi-2 q4_0:rot=hadamard turboquant:bits=3; do
  name=$(echo "$scheme" | tr ':=,' '---')
  "$dgq" compress "$here/fuzz_trace/seed-f16-noise.h5" -o "$here/fuzz_compressed/seed-$name.h5" --scheme "$scheme" >/dev/null
done

# A results file with two runs.
"$dgq" replay "$here/fuzz_trace/seed-f16-noise.h5" --scheme q8_0 --scheme dgq -o "$here/fuzz_results/seed-replay.h5" \
  >/dev/null 2>&1

# Model and token files, then the base logits of a 3-chunk eval of them (fuzz_base_logits.cpp
# reads with this run's shape: 3 chunks x 3 scored rows, 1 layer, 16 tokens of vocabulary).
"$python" "$here/write_seed_files.py" model "$here/fuzz_model"
"$python" "$here/write_seed_files.py" tokens "$here/fuzz_tokens"
"$python" "$here/write_seed_files.py" gguf "$here/fuzz_gguf"
"$dgq" eval --model "$here/fuzz_model/seed-llama.h5" --text "$here/fuzz_tokens/seed-tokens-int32.h5" --ctx 8 \
  --schemes q8_0 --base-logits "$here/fuzz_base_logits/seed-base-logits.h5" -o "$scratch/eval.h5" >/dev/null

# fuzz_sweep_toml has no generated seeds: the shipped experiments/*.toml are its seeds, read in
# place (tools/fuzz-common.sh).
du -k "$here"/fuzz_*/seed-* | sort -n | awk '{ total += $1; print } END { print total " KB in all" }'

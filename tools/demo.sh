#!/usr/bin/env bash
# The main job (README): set up, build, then replay the shipped traces in data/ through DGQ
# and the baselines; writes out/demo.h5 (results) and out/demo.json (summary) and prints
# the comparison table. Last, it makes the inputs of the README's `dgq eval` and passkey
# examples (out/prompts, out/eval-texts: tools/make-eval-inputs.sh) when .venv and the model
# files are there (not with DGQ_SKIP_PYTHON=1), so those examples run next with no other step.
# DGQ_BIN=PATH skips the setup and uses that dgq (tools/update-readme-demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${DGQ_BIN:-}" ] || tools/setup.sh
DGQ="${DGQ_BIN:-${DGQ_BUILD_DIR:-build}/sim/dgq}"
mkdir -p out
rm -f out/demo.h5 out/demo.json
"$DGQ" replay data/*.h5 \
  --scheme fp16 --scheme q8_0 --scheme int8-token --scheme int4-group64 --scheme fp8-e4m3 \
  --scheme kivi-4 --scheme kivi-2 --scheme dgq --scheme dgq:granularity=segment-channel \
  -o out/demo.h5 --json out/demo.json
"$DGQ" memory --model llama-3.1-8b --tokens 131072
if [ -x .venv/bin/python ] && [ -f models/smollm2-135m.h5 ]; then
  tools/make-eval-inputs.sh smollm2 >out/eval-inputs.log 2>&1 || {
    cat out/eval-inputs.log >&2
    echo "demo: tools/make-eval-inputs.sh failed (its output above)" >&2
    exit 1
  }
  echo "demo: the README's eval and passkey examples' inputs are in out/prompts and out/eval-texts"
else
  echo "demo: no .venv or models/smollm2-135m.h5 (DGQ_SKIP_PYTHON=1?): the eval examples' inputs were not made"
fi

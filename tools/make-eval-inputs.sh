#!/usr/bin/env bash
# The inputs of `dgq eval` and the passkey task that the README's examples and docs/eval.md use,
# each made only when missing:
#   out/prompts/{code,legal,poetry,prose}.txt   tools/prompts.sh (texts of Debian packages)
#   out/eval-texts/MODEL-KIND-{clean,noise10}.h5 tools/make-eval-texts.py, the model's tokenizer
# Usage: tools/make-eval-inputs.sh [MODEL...]   (smollm2, gemma3; default smollm2, the README's)
# Needs .venv (tools/setup-python.sh). tools/demo.sh and experiments/run.sh call it.
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
[ -x "$python" ] || { echo "make-eval-inputs.sh: $python missing: run tools/setup-python.sh" >&2; exit 1; }
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(smollm2)
[ -f out/prompts/prose.txt ] || tools/prompts.sh out/prompts
for model in "${models[@]}"; do
  # prose-noise10 is the last file make-eval-texts.py writes: present, the set is complete.
  [ -f "out/eval-texts/$model-prose-noise10.h5" ] ||
    OPENBLAS_NUM_THREADS=1 "$python" tools/make-eval-texts.py "$model" --prompts out/prompts -o out/eval-texts
done

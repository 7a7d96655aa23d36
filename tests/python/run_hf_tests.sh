#!/usr/bin/env bash
# The dgq.hf tests (tests/python/test_hf_*.py): they need torch and transformers in .venv
# (tools/setup-python.sh --hf, about 5.3 GB). Without them the run is reported skipped (exit 77,
# ctest's SKIP_RETURN_CODE), unless DGQ_HF_REQUIRED=1 (tools/test.sh sets it, as it installs them),
# where a missing torch is a failure: CI must never pass by skipping.
# Usage: tests/python/run_hf_tests.sh [--smollm2 [--update-docs]] [pytest args...]
#   --smollm2       the slower check on SmolLM2 read through transformers' GGUF loader
#                   (test_hf_smollm2.py, about 2-4 min on 2 cores)
#   --update-docs   and write its figures to docs/results/hf-agreement.md (the fragment
#                   docs/python.md quotes), then splice it into docs/python.md
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="$repo_root/.venv/bin/python"
# This checkout's dgqtools (tools/dgqtools) before any other on the path: .venv may be shared.
export PYTHONPATH="$repo_root/tools${PYTHONPATH:+:$PYTHONPATH}"
tests=(tests/python/test_hf_cache.py tests/python/test_hf_generation.py)
update_docs=0
if [ "${1:-}" = --smollm2 ]; then
  tests=(tests/python/test_hf_smollm2.py); shift
  if [ "${1:-}" = --update-docs ]; then update_docs=1; shift; fi
fi
if [ ! -x "$python" ]; then
  echo "run_hf_tests.sh: $python not found: run tools/setup-python.sh --hf first" >&2
  exit 1
fi
if ! "$python" -c 'import torch, transformers' 2>/dev/null; then
  if [ "${DGQ_HF_REQUIRED:-0}" = 1 ]; then
    echo "run_hf_tests.sh: torch/transformers not importable from $python, and DGQ_HF_REQUIRED=1: run tools/setup-python.sh --hf" >&2
    exit 1
  fi
  echo "run_hf_tests.sh: skipped: torch and transformers are not installed (tools/setup-python.sh --hf)"
  exit 77
fi
cd "$repo_root"
if ((update_docs)); then
  fragment=docs/results/hf-agreement.md
  rm -f "$fragment"
  DGQ_HF_FRAGMENT="$repo_root/$fragment" DGQ_HF_TESTS=1 "$python" -m pytest "${tests[@]}" -q -p no:cacheprovider "$@"
  [ -f "$fragment" ] || { echo "run_hf_tests.sh: $fragment not written (a test did not run)" >&2; exit 1; }
  awk -v table="$fragment" '
    $0 == "<!-- BEGIN hf-agreement -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- END hf-agreement -->" { skip = 0 }
    !skip { print }' docs/python.md > docs/python.md.partial
  mv docs/python.md.partial docs/python.md
  echo "run_hf_tests.sh: wrote $fragment and spliced it into docs/python.md"
  exit 0
fi
DGQ_HF_TESTS=1 exec "$python" -m pytest "${tests[@]}" -q -p no:cacheprovider "$@"

#!/usr/bin/env bash
# The main job (README): set up, build, then replay the shipped traces in data/ through DGQ
# and the baselines; writes out/demo.h5 (results) and out/demo.json (summary) and prints
# the comparison table.
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

#!/usr/bin/env bash
# Where `dgq eval`'s time goes (docs/benchmarks.md, "Where the runner's time goes"): the
# `--profile` table of SmolLM2-135M and Gemma 3 270M at n_ctx 1024 (2 chunks) and 4096 (1 chunk),
# code text, the exact base and one q8_0 cache, 2 threads. Run it on an idle machine: it refuses
# to start when the 1-minute load average is over 1.5 (DGQ_PROFILE_ANY_LOAD=1 runs anyway and
# says so in the block).
# Usage: tools/profile-runner.sh [--update-docs] [BUILD_DIR]   (default build). Needs models/
# (tools/make-models.sh) and out/eval-texts/ (docs/eval.md). Prints the block; --update-docs also
# splices it between "<!-- BEGIN runner-profile -->" and "<!-- END runner-profile -->".
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
update=0
if [ "${1:-}" = "--update-docs" ]; then
  update=1
  shift
fi
dgq="${1:-$repo/build}/sim/dgq"
[ -x "$dgq" ] || { echo "profile-runner: $dgq not found; build the dgq target first" >&2; exit 1; }
load="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load" 'BEGIN { exit !(l > 1.5) }' && [ "${DGQ_PROFILE_ANY_LOAD:-0}" != 1 ]; then
  echo "profile-runner: load average $load: the machine is not idle (DGQ_PROFILE_ANY_LOAD=1 runs anyway)" >&2
  exit 1
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
block="$out/block.md"
{
  echo "Output of \`tools/profile-runner.sh\` at commit $(git -C "$repo" rev-parse --short=12 HEAD)" \
    "($(date -u +%F)), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))," \
    "load average $load at the start:"
  echo
  echo '```'
  for run in "smollm2-135m smollm2 1024 2" "smollm2-135m smollm2 4096 1" "gemma3-270m gemma3 1024 2" \
    "gemma3-270m gemma3 4096 1"; do
    read -r file model ctx chunks <<<"$run"
    echo "### $model n_ctx $ctx, $chunks chunk(s)"
    "$dgq" eval --model "$repo/models/$file.h5" --text "$repo/out/eval-texts/$model-code-clean.h5" --ctx "$ctx" \
      --chunks "$chunks" --scheme q8_0 --threads 2 --profile -q -o "$out/$model-$ctx.h5" |
      sed -n '/^forward pass:/p;/^forward-pass profile/,$p'
  done
  echo '```'
} >"$block"
cat "$block"
if ((update)); then
  doc="$repo/docs/benchmarks.md"
  PYTHONPATH="$repo/tools" "$repo/.venv/bin/python" "$repo/tools/splice-block.py" "$doc" runner-profile "$block"
  echo "profile-runner: spliced into $doc" >&2
fi

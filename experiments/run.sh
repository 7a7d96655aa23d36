#!/usr/bin/env bash
# Runs the experiments of docs/results.md and the notebooks that turn their results into the
# figures (docs/figures/) and tables (docs/results/, spliced into docs/results.md).
#
#   experiments/run.sh [--quick] [NAME...]
#
# NAME: baseline group_ratio min_var segments_vs_length noise markers memory (default: all,
# then the claims ledger). --quick keeps generated traces small (a few minutes on 2 cores);
# the full mode generates long contexts (up to 128K tokens) and adds the real traces in
# out/real-traces/ (made by tools/make-real-traces.sh) to every sweep over recorded traces.
#
# Builds nothing: the dgq binary is $DGQ_BIN (default build/sim/dgq, made by tools/setup.sh).
# Python: .venv (tools/setup-python.sh is called when it has no jupyter).
# Outputs: out/experiments/<name>.h5 (results), out/experiments/traces/ (generated traces),
# out/experiments/notebooks/ (executed notebooks), docs/figures/, docs/results/, docs/results.md.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

ALL=(baseline group_ratio min_var segments_vs_length noise markers memory)
usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

quick=0
names=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *)
      if [[ " ${ALL[*]} claims " != *" $arg "* ]]; then
        echo "run.sh: unknown experiment '$arg' (known: ${ALL[*]} claims)" >&2
        exit 2
      fi
      names+=("$arg") ;;
  esac
done
((${#names[@]})) || names=("${ALL[@]}")

DGQ="${DGQ_BIN:-build/sim/dgq}"
if [ ! -x "$DGQ" ]; then
  echo "run.sh: dgq binary '$DGQ' not found; build it (tools/setup.sh) or set DGQ_BIN" >&2
  exit 2
fi
[ -x .venv/bin/jupyter ] || tools/setup-python.sh
JUPYTER=.venv/bin/jupyter

OUT=out/experiments
TRACES="$OUT/traces"
mkdir -p "$OUT" "$TRACES" "$OUT/notebooks" "$OUT/configs"
export DGQ_RESULTS_DIR="$repo/$OUT" DGQ_FIGURES_DIR="$repo/docs/figures"
export DGQ_FRAGMENTS_DIR="$repo/docs/results" DGQ_REPORT="$repo/docs/results.md"

log() { echo "run.sh: $*" >&2; }

# The recorded/shipped traces every sweep over "the traces" uses.
shipped_traces() {
  ls data/*.h5
  if ((!quick)) && compgen -G "out/real-traces/*.h5" >/dev/null; then ls out/real-traces/*.h5; fi
}

# gen_trace OUT_PATH ARGS...: a synthetic trace, made once (dgq gen-trace is deterministic
# from its arguments, so an existing file from the same arguments is reused).
gen_trace() {
  local path="$1"; shift
  local stamp="$path.args"
  if [ -f "$path" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then return; fi
  log "gen-trace $path ($*)"
  "$DGQ" gen-trace "$@" -o "$path"
  echo "$*" > "$stamp"
}

# sweep NAME TRACE...: experiments/NAME.toml with its traces list replaced by TRACE...,
# written to out/experiments/configs/NAME.toml and run by `dgq sweep` into NAME.h5.
# The sweep resumes: runs already complete in NAME.h5 are skipped.
sweep() {
  local name="$1"; shift
  local config="$OUT/configs/$name.toml"
  {
    printf 'traces = ['
    local sep=""
    for t in "$@"; do printf '%s"%s"' "$sep" "$repo/$t"; sep=", "; done
    printf ']\n'
    grep -v '^traces *=' "experiments/$name.toml"
  } > "$config"
  log "sweep $name over $# traces"
  "$DGQ" sweep "$config" -o "$OUT/$name.h5"
}

run_baseline() { mapfile -t t < <(shipped_traces); sweep baseline "${t[@]}"; }
run_group_ratio() { mapfile -t t < <(shipped_traces); sweep group_ratio "${t[@]}"; }
run_min_var() { mapfile -t t < <(shipped_traces); sweep min_var "${t[@]}"; }
run_markers() { mapfile -t t < <(shipped_traces); sweep markers "${t[@]}"; }

# Segment counts need long sequences but no width: few layers and heads keep it fast.
run_segments_vs_length() {
  local lengths=(1024 2048 4096 8192)
  ((quick)) || lengths=(1024 2048 4096 8192 16384 32768 65536 131072)
  local traces=()
  for kind in code prose legal poetry; do
    for L in "${lengths[@]}"; do
      local path="$TRACES/seg-$kind-$L.h5"
      gen_trace "$path" --kind "$kind" --tokens "$L" --layers 2 --q-heads 8 --kv-heads 2 --head-dim 128 --probes 8 --seed 7
      traces+=("$path")
    done
  done
  sweep segments_vs_length "${traces[@]}"
}

# Noise: synthetic traces of two kinds at each noise rate, the same seed otherwise.
run_noise() {
  local L=4096 layers=4
  ((quick)) || { L=16384; layers=8; }
  local traces=()
  for kind in code prose; do
    for rate in 0 0.05 0.1 0.2; do
      local path="$TRACES/noise-$kind-$rate.h5"
      gen_trace "$path" --kind "$kind" --tokens "$L" --layers "$layers" --q-heads 8 --kv-heads 2 --head-dim 128 \
        --probes 16 --seed 11 --noise-rate "$rate"
      traces+=("$path")
    done
  done
  sweep noise "${traces[@]}"
}

# Memory: `dgq memory` for each model shape and context; its JSON is the result.
run_memory() {
  local partial="$OUT/memory.json.partial"
  {
    echo "["
    local sep=""
    for model in llama-3.1-8b llama-3-70b; do
      for tokens in 8192 32768 131072; do
        printf '%s' "$sep"
        "$DGQ" memory --model "$model" --tokens "$tokens" --json -
        sep=","
      done
    done
    echo "]"
  } > "$partial"
  mv "$partial" "$OUT/memory.json"
}

notebook() {
  local name="$1"
  log "notebook $name"
  (cd notebooks && "$repo/$JUPYTER" nbconvert --to notebook --execute "$name.ipynb" \
      --output-dir "$repo/$OUT/notebooks" --log-level WARN)
}

for name in "${names[@]}"; do
  [ "$name" = claims ] || "run_$name"
  notebook "$name"
done
# The ledger quotes every experiment: rebuild it after any of them (missing ones say "not run").
[[ " ${names[*]} " == *" claims "* ]] || notebook claims
log "done: ${names[*]}"

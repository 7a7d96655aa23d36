#!/usr/bin/env bash
# Runs the experiments of docs/results.md and the notebooks that turn their results into the
# figures (docs/figures/) and tables (docs/results/, spliced into docs/results.md).
#
#   experiments/run.sh [--quick] [NAME...]
#
# NAME: baseline group_ratio min_var segments_vs_length noise markers memory claims (default:
# all), and e2e, frontier, frontier-confirm, frontier-causal, frontier-serving, dgq3, dgq3-ablation, dgq3-low, dgq3-passkey,
# dgq3-prerope, dgq3-layers, dgq3-grid, dgq3-best, dgq3-roles, long-context (language models;
# only when named). The claims ledger is rebuilt after any run. --quick uses experiments/NAME-quick.toml
# where one exists (small synthetic traces; a few minutes on 2 cores); the full mode uses
# experiments/NAME.toml (contexts up to 128K tokens) and adds the real traces in
# out/real-traces/ (made by tools/make-real-traces.sh) to every sweep over recorded traces.
#
# Builds nothing: the dgq binary is $DGQ_BIN (default build/sim/dgq, made by tools/setup.sh).
# Python: .venv (tools/setup-python.sh is called when it has no jupyter).
# Outputs: out/experiments/<name>.h5 (results; <name>.h5.cache/gen-v<N>/ holds the traces that
# version N of the generator made),
# out/experiments/notebooks/ (executed notebooks), and the regenerated docs: DOCS/figures/,
# DOCS/results/, DOCS/results.md, where DOCS is $DGQ_DOCS_OUT (default: docs/). CI sets
# DGQ_DOCS_OUT=out/ci-docs so that it leaves the committed docs alone; docs/results.md is
# copied there first, so its fragments are spliced into a copy. DGQ_EXPERIMENTS_OUT moves the
# results files (default out/experiments; the ctest entry uses a fresh folder in the build).
# Results of another dgq build are not resumed or reused (docs/results-format.md, "Provenance"):
# delete them, or set DGQ_ALLOW_MIXED_VERSIONS=1 to keep them, each labelled with its version.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

ALL=(baseline group_ratio min_var segments_vs_length noise markers memory)
usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

quick=0
names=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *)
      if [[ " ${ALL[*]} claims e2e frontier frontier-confirm frontier-causal frontier-serving dgq3 dgq3-ablation dgq3-low dgq3-passkey dgq3-prerope dgq3-layers dgq3-grid dgq3-best dgq3-roles long-context " != *" $arg "* ]]; then
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
# shellcheck disable=SC2034  # read by experiments/run/notebooks.sh
JUPYTER=.venv/bin/jupyter

OUT="${DGQ_EXPERIMENTS_OUT:-out/experiments}"
[[ "$OUT" = /* ]] || OUT="$repo/$OUT"
mkdir -p "$OUT" "$OUT/notebooks" "$OUT/configs"
DOCS="${DGQ_DOCS_OUT:-docs}"
[[ "$DOCS" = /* ]] || DOCS="$repo/$DOCS"
mkdir -p "$DOCS/figures" "$DOCS/results"
# Fragments are spliced into an existing report: start another directory's from docs/'s.
[ -f "$DOCS/results.md" ] || cp docs/results.md "$DOCS/results.md"
# The notebooks and tools import this checkout's dgqtools (tools/dgqtools) first: .venv may be
# shared by several checkouts.
export PYTHONPATH="$repo/tools${PYTHONPATH:+:$PYTHONPATH}"
export DGQ_RESULTS_DIR="$OUT" DGQ_FIGURES_DIR="$DOCS/figures"
export DGQ_FRAGMENTS_DIR="$DOCS/results" DGQ_REPORT="$DOCS/results.md"
# The notebooks name the mode in each fragment's provenance line (R.measured_by).
if ((quick)); then export DGQ_EXPERIMENT_MODE=quick; else export DGQ_EXPERIMENT_MODE=full; fi

# The experiment families (experiments/run/): each file defines the run_NAME functions of its
# experiments and the helpers they share; nothing runs while they are read.
for module in common replay_sweeps memory e2e passkey long_context frontier dgq3 layer_plans notebooks; do
  # shellcheck source=/dev/null
  source "$repo/experiments/run/$module.sh"
done

for name in "${names[@]}"; do
  [ "$name" = claims ] || "run_$name"
  notebook "$name"
done
# The ledger quotes every experiment: rebuild it after any of them (missing ones say "not run").
[[ " ${names[*]} " == *" claims "* ]] || notebook claims
log "done: ${names[*]}"

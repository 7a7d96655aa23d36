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

log() { echo "run.sh: $*" >&2; }

# This build's version string (the last word of `dgq --version`), and the flag that lets a sweep
# or eval keep results of other builds when DGQ_ALLOW_MIXED_VERSIONS is set.
DGQ_VERSION="$("$DGQ" --version | awk '{print $NF}')"
MIXED_FLAG=()
[ -z "${DGQ_ALLOW_MIXED_VERSIONS:-}" ] || MIXED_FLAG=(--allow-mixed-versions)

# True when a finished `dgq eval --json` summary may be reused: written by this build, or any
# build with DGQ_ALLOW_MIXED_VERSIONS; otherwise fails naming both versions. A result without a
# reusable summary is rerun over its own .h5: those dgq eval calls pass --force.
reusable_summary() {
  local json="$1" recorded
  recorded="$(sed -n 's/.*"dgq_version": "\([^"]*\)".*/\1/p' "$json" | head -n 1)"
  [ "$recorded" = "$DGQ_VERSION" ] && return 0
  ((${#MIXED_FLAG[@]})) && return 0
  echo "run.sh: $json was written by dgq ${recorded:-unknown}, this is dgq $DGQ_VERSION; delete it to rerun, or set DGQ_ALLOW_MIXED_VERSIONS=1" >&2
  exit 2
}

# The sweep config of an experiment: experiments/NAME-quick.toml in the quick mode where it
# exists, else experiments/NAME.toml.
config_of() {
  local name="$1"
  if ((quick)) && [ -f "experiments/$name-quick.toml" ]; then
    echo "experiments/$name-quick.toml"
  else
    echo "experiments/$name.toml"
  fi
}

# sweep NAME: `dgq sweep` of the experiment's config into out/experiments/NAME.h5 (synthetic
# traces are generated into NAME.h5.cache/gen-v<N>/). A config with the line `#@ shipped-traces` gets
# a [[trace]] table for every shipped trace in data/ and, in the full mode, every real trace
# in out/real-traces/ (tools/make-real-traces.sh); the result is out/experiments/configs/NAME.toml.
# The sweep resumes: runs already complete in NAME.h5 are skipped.
sweep() {
  local name="$1" config
  config="$(config_of "$name")"
  if grep -q '^#@ shipped-traces' "$config"; then
    local copy="$OUT/configs/$name.toml" traces=(data/*.h5)
    if ((!quick)) && compgen -G "out/real-traces/*.h5" >/dev/null; then traces+=(out/real-traces/*.h5); fi
    cp "$config" "$copy"
    for t in "${traces[@]}"; do printf '\n[[trace]]\npath = "%s"\n' "$repo/$t" >> "$copy"; done
    config="$copy"
  fi
  log "sweep $name ($config)"
  "$DGQ" sweep "$config" -o "$OUT/$name.h5" ${MIXED_FLAG[@]+"${MIXED_FLAG[@]}"}
}

run_baseline() { sweep baseline; }
run_group_ratio() { sweep group_ratio; }
run_min_var() { sweep min_var; }
run_markers() { sweep markers; }
run_segments_vs_length() { sweep segments_vs_length; }
run_noise() { sweep noise; }

# e2e (docs/eval.md): `dgq eval` of both models on the eval texts, every scheme, into
# out/experiments/e2e/<model>-<text>-<ctx>.{h5,json}; a finished result is kept, a killed one
# resumes. Not in the default list: it runs language models (quick: about 10-20 min on the
# shared 2-core machine; full: hours). Models: tools/make-models.sh; texts: tools/prompts.sh +
# tools/make-eval-texts.py into out/eval-texts/ (made here when missing).
declare -A E2E_MODEL_FILES=([smollm2]=smollm2-135m.h5 [gemma3]=gemma3-270m.h5)
# The models (tools/make-models.sh) and their token files in out/eval-texts/, made when missing.
e2e_inputs() {
  tools/make-models.sh smollm2 gemma3
  tools/make-eval-inputs.sh smollm2 gemma3
}
E2E_SCHEMES=(q8_0 int8-token fp8-e4m3 int4-group64 kivi-4 kivi-2 dgq dgq:granularity=segment-channel)
run_e2e() {
  local model texts ctx chunks text name scheme scheme_args=()
  for scheme in "${E2E_SCHEMES[@]}"; do scheme_args+=(--scheme "$scheme"); done
  if ((quick)); then ctx=256; chunks=1; texts=(code-clean legal-clean poetry-clean prose-clean)
  else ctx=1024; chunks=2; texts=(code-clean code-noise10 legal-clean legal-noise10 poetry-clean poetry-noise10 prose-clean prose-noise10)
  fi
  e2e_inputs
  mkdir -p "$OUT/e2e"
  for model in smollm2 gemma3; do
    for text in "${texts[@]}"; do
      name="$model-$text-$ctx"
      if [ -f "$OUT/e2e/$name.json" ] && reusable_summary "$OUT/e2e/$name.json"; then
        log "e2e $name: done before"
        continue
      fi
      log "e2e $name"
      "$DGQ" eval --model "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}" \
        --text "out/eval-texts/$model-$text.h5" --ctx "$ctx" --chunks "$chunks" \
        "${scheme_args[@]}" -o "$OUT/e2e/$name.h5" --force --json "$OUT/e2e/$name.json" \
        ${MIXED_FLAG[@]+"${MIXED_FLAG[@]}"} > "$OUT/e2e/$name.txt.partial"
      mv "$OUT/e2e/$name.txt.partial" "$OUT/e2e/$name.txt"
    done
  done
}

# long-context (docs/results.md §10): the causal cache at long contexts and the passkey task.
# 1. Perplexity/KLD: `dgq eval --cache causal` of each scheme on long token files
#    (out/eval-texts-long/, 32K tokens of the code text, made here when missing), one chunk per
#    n_ctx, into $OUT/long-context/<model>-<text>-<ctx>.{h5,json}; the results keep per-token
#    scores, so the notebook buckets KLD by position.
# 2. Passkey: tools/make-passkey.py task files, then `dgq eval --task passkey` (causal cache)
#    into $OUT/long-context/passkey-<model>.{h5,json}.
# The full grid (hours on 2 cores; Slurm or a bigger machine) and the quick one (about an hour on
# the shared 2-core machine) differ in contexts, lengths, depths and models, not in schemes.
LONG_SCHEMES=(q8_0 "q4_0:rot=hadamard" "turboquant:bits=3" kivi-4
  "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v")
PASSKEY_SCHEMES=(fp16 "turboquant:bits=3"
  "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v")
long_context_inputs() {
  local model
  e2e_inputs
  for model in smollm2 gemma3; do
    [ -f "out/eval-texts-long/$model-code-clean.h5" ] ||
      .venv/bin/python tools/make-eval-texts.py "$model" --prompts out/prompts -o out/eval-texts-long \
        --tokens 32768 --kinds code
  done
}
long_context_eval() {
  local model="$1" text="$2" ctx="$3" name scheme args=()
  name="$model-$text-$ctx"
  if [ -f "$OUT/long-context/$name.json" ] && reusable_summary "$OUT/long-context/$name.json"; then
    log "long-context $name: done before"
    return
  fi
  for scheme in "${LONG_SCHEMES[@]}"; do args+=(--scheme "$scheme"); done
  log "long-context $name"
  "$DGQ" eval --model "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}" \
    --text "out/eval-texts-long/$model-$text.h5" --ctx "$ctx" --chunks 1 --cache causal \
    "${args[@]}" -o "$OUT/long-context/$name.h5" --force --json "$OUT/long-context/$name.json" \
    ${MIXED_FLAG[@]+"${MIXED_FLAG[@]}"} > "$OUT/long-context/$name.txt.partial"
  mv "$OUT/long-context/$name.txt.partial" "$OUT/long-context/$name.txt"
}
# The passkey task of MODEL (tools/make-passkey.py: LENGTHS, DEPTHS, KEYS keys) through the given
# schemes into DIR/passkey-MODEL.{h5,json,txt}; a finished result is kept. Shared by long-context
# and dgq3.
# passkey_run DIR MODEL LENGTHS DEPTHS KEYS SCHEME...: make the task and run it (PASSKEY_EVAL_ARGS:
# more dgq eval arguments, such as --keys pre-rope).
PASSKEY_EVAL_ARGS=()
passkey_run() {
  local dir="$1" model="$2" lengths="$3" depths="$4" keys="$5" name scheme args=()
  shift 5
  name="passkey-$model"
  if [ -f "$dir/$name.json" ] && reusable_summary "$dir/$name.json"; then
    log "$dir/$name: done before"
    return
  fi
  mkdir -p "$dir"
  .venv/bin/python tools/make-passkey.py "$model" --prompts out/prompts --lengths "$lengths" --depths "$depths" \
    --keys "$keys" --seed 0 -o "$dir/$name-task.h5"
  for scheme in "$@"; do args+=(--scheme "$scheme"); done
  log "$dir/$name (lengths $lengths, depths $depths, $keys keys)"
  "$DGQ" eval --task passkey --model "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}" \
    --text "$dir/$name-task.h5" --cache causal "${args[@]}" ${PASSKEY_EVAL_ARGS[@]+"${PASSKEY_EVAL_ARGS[@]}"} -o "$dir/$name.h5" --force \
    --json "$dir/$name.json" > "$dir/$name.txt.partial"
  mv "$dir/$name.txt.partial" "$dir/$name.txt"
}
long_context_passkey() { passkey_run "$OUT/long-context" "$1" "$2" "$3" "$4" "${PASSKEY_SCHEMES[@]}"; }
# 3. The runner's throughput beside llama.cpp's llama-perplexity (bench/ggml/perplexity.sh: same
#    model, text, n_ctx and 2 threads, one round each), into
#    $OUT/long-context/throughput-<model>-<ctx>.txt; only when bench/ggml/run.sh --build-only has
#    built llama-perplexity (minutes), and a finished file is kept. The code text: llama-perplexity
#    needs 2 x n_ctx tokens of raw text, and only code has 16K.
long_context_throughput() {
  local model="$1" ctx="$2" chunks="$3" file
  file="$OUT/long-context/throughput-$model-$ctx.txt"
  [ -f "$file" ] && { log "throughput $model $ctx: done before"; return; }
  [ -x "${DGQ_GGML_DIR:-out/ggml}/build/bin/llama-perplexity" ] ||
    { log "throughput: llama-perplexity not built (bench/ggml/run.sh --build-only); skipped"; return; }
  log "throughput $model n_ctx $ctx"
  CTX="$ctx" CHUNKS="$chunks" ROUNDS=1 THREADS=2 KIND=code DGQ="$DGQ" bash bench/ggml/perplexity.sh "$model" \
    | grep -E '^machine|tokens/s|^result|died' > "$file.partial"
  mv "$file.partial" "$file"
}
run_long-context() {
  local ctx model
  long_context_inputs
  mkdir -p "$OUT/long-context"
  for model in smollm2 gemma3; do
    long_context_throughput "$model" 1024 2
    long_context_throughput "$model" 4096 2
    long_context_throughput "$model" 8192 1
  done
  if ((quick)); then
    for ctx in 2048 4096 8192; do long_context_eval smollm2 code-clean "$ctx"; done
    long_context_passkey smollm2 1024,2048 0,50,100 10
    for ctx in 4096 16384; do long_context_eval gemma3 code-clean "$ctx"; done
  else
    for ctx in 2048 4096 8192; do long_context_eval smollm2 code-clean "$ctx"; done
    for ctx in 4096 8192 16384 32768; do long_context_eval gemma3 code-clean "$ctx"; done
    long_context_passkey smollm2 1024,2048,4096,8000 0,25,50,75,100 10  # 8192 + BOS + answer > its context
    long_context_passkey gemma3 1024,2048,4096,8192,16384 0,25,50,75,100 10
  fi
}

# frontier (DGQ v2): an eval sweep (docs/eval.md, "Eval sweeps") of every cache at 2-8.5 bits on
# both models into out/experiments/frontier.h5; resumable like every sweep. The config's
# `#@ dgq2-schemes` line gets experiments/frontier-dgq2.txt (the DGQ v2 configurations, one spec
# per line, shared by both modes) and `#@ eval-models` an [[eval.model]] table per model with
# absolute paths to its token files: the clean texts in the quick mode, clean and noisy in the
# full mode. Not in the default list (quick: about an hour on 2 cores; full: many hours).
run_frontier() { frontier_sweep frontier; }
# frontier-confirm: the contested points of the frontier again at n_ctx 1024 on the clean texts
# (experiments/frontier-confirm.toml, the same in both modes), into frontier-confirm.h5.
run_frontier-confirm() { frontier_sweep frontier-confirm clean; }
# frontier-causal: frontier-confirm's points with the prefill and the causal cache side by side
# (experiments/frontier-causal.toml), into frontier-causal.h5; its notebook is causal.ipynb.
run_frontier-causal() { frontier_sweep frontier-causal clean; }
# frontier-serving: the caches serving engines ship in 2026 (vLLM's TurboQuant presets and cache
# dtypes, NVFP4/MX, KVarN, sinks) causally beside the references (experiments/frontier-serving.toml),
# into frontier-serving.h5; its notebook is serving.ipynb.
run_frontier-serving() { frontier_sweep frontier-serving clean; }
# dgq3: DGQ v3's ablation at n_ctx 1024 (experiments/dgq3-ablation.toml) and its combined points at
# n_ctx 4096 (dgq3-long.toml), causal, into dgq3-ablation.h5 and dgq3-long.h5; notebook dgq3.ipynb.
# Then dgq3-low, dgq3-prerope, dgq3-layers, dgq3-grid, dgq3-best and dgq3-passkey (below).
run_dgq3() {
  run_dgq3-ablation; run_dgq3-low; run_dgq3-prerope; run_dgq3-layers
  run_dgq3-grid; run_dgq3-best; run_dgq3-roles; run_dgq3-passkey
}
# dgq3-ablation: the first two sweeps of dgq3 alone (the ablation at n_ctx 1024 and the combined
# points at 4096) and the dgq3 block, so that the block can be regenerated without the rest.
run_dgq3-ablation() { frontier_sweep dgq3-ablation clean; frontier_sweep dgq3-long clean; }
# dgq3-prerope: the candidate "pre-RoPE keys" (experiments/dgq3-prerope.toml: each cache with its
# keys stored after and before RoPE), into dgq3-prerope.h5; notebook dgq3-prerope.ipynb. About
# 25 min on the 2-core machine.
run_dgq3-prerope() { frontier_sweep dgq3-prerope clean; }
# dgq3-grid: the candidate "non-uniform codes" (experiments/dgq3-grid.toml: dgq3's points with and
# without the Lloyd-Max grid of rule W8, keys after and before RoPE), into dgq3-grid.h5; notebook
# dgq3-grid.ipynb.
run_dgq3-grid() { frontier_sweep dgq3-grid clean; }
# dgq3-layers: the candidate "bits by layer sensitivity" (KVTuner). Per model,
# tools/layer-sensitivity.py measures every layer's KLD at each of DGQ3_LAYER_LEVELS (that layer
# alone at the level, fp16 elsewhere; causal) on a calibration text of 4 x 512 tokens taken past
# token 6144 of the 4 clean texts (the report evaluates tokens 0-4095), and plans the layers for
# each budget in DGQ3_LAYER_BUDGETS, with a sensitivity-blind control of the same levels; then
# `dgq eval` runs the plans, the controls, the uniform levels and the yardsticks on the 4 clean
# texts (n_ctx 1024, 2 chunks, causal) into $OUT/dgq3-layers/; notebook dgq3-layers.ipynb. About
# 40 min on the 2-core machine. dgq3-best does the same with every candidate that helped on its
# own: the levels on rule W8's grid (nl=kv) and keys stored before RoPE (calibration and
# evaluation), into $OUT/dgq3-best/, the yardsticks evaluated post-RoPE beside them (as llama.cpp
# runs them); the same notebook with LAYERS_NAME=dgq3-best.
# The levels: DGQ v3's points of §9e from 3.3 to 4.8 bits (K3V3, K4V3, K4V4, K5V4). A chain of K
# bits alone over 3-bit values was tried first and dropped before its plans: on SmolLM2's
# calibration text uniform K6V3 (4.83 bits) kept 2.6x the KLD that q5_0+rotation has on the
# report's texts, the values' floor (§9e reading), so no plan over it could meet the target.
DGQ3_LAYER_LEVELS=("dgq3:kbits=3,vbits=3,center=kv,hi_frac=0.05" "dgq3:vbits=3,center=kv,hi_frac=0.05"
  "dgq3:center=kv,hi_frac=0.05" "dgq3:kbits=5,center=kv,hi_frac=0.05")
DGQ3_LAYER_BUDGETS=(3.6 4.0 4.4)
DGQ3_BEST_LEVELS=("dgq3:kbits=3,vbits=3,center=kv,hi_frac=0.05,nl=kv" "dgq3:vbits=3,center=kv,hi_frac=0.05,nl=kv"
  "dgq3:center=kv,hi_frac=0.05,nl=kv" "dgq3:kbits=5,center=kv,hi_frac=0.05,nl=kv")
run_dgq3-layers() { layer_plan_experiment dgq3-layers post-rope "${DGQ3_LAYER_LEVELS[@]}"; }
run_dgq3-best() {
  layer_plan_experiment dgq3-best pre-rope "${DGQ3_BEST_LEVELS[@]}"
  best_plans_long
  best_plans_passkey
}
# best_plan_specs MODEL: the specs of dgq3-best's 4.0- and 4.4-bit plans for MODEL, one per line.
best_plan_specs() {
  .venv/bin/python -c '
import json, sys
plans = json.load(open(sys.argv[1]))["plans"]
print(plans["4"]["spec"]); print(plans["4.4"]["spec"])' "$OUT/dgq3-best/plans-$1.json"
}
# dgq3-best's plans at 4.0 and 4.4 bits at n_ctx 4096 (one chunk per text, the issue's second
# length; keys before RoPE) beside the yardsticks post-RoPE, into $OUT/dgq3-best/<model>-<kind>-4k*.
best_plans_long() {
  local model kind plans=()
  for model in smollm2 gemma3; do
    mapfile -t plans < <(best_plan_specs "$model")
    for kind in code legal poetry prose; do
      layer_plan_eval dgq3-best "$model" "$kind" "$OUT/dgq3-best/$model-$kind-4k" 4096 1 --keys pre-rope \
        --scheme "${plans[0]}" --scheme "${plans[1]}"
      layer_plan_eval dgq3-best "$model" "$kind" "$OUT/dgq3-best/$model-$kind-4k-yardsticks" 4096 1 \
        --scheme "q4_0:rot=hadamard" --scheme "q5_0:rot=hadamard"
    done
  done
}
# dgq3-best's plans at 4.0 and 4.4 bits and its K4V3 level on the passkey task (SmolLM2, keys
# stored before RoPE, the fp16 base likewise; dgq3-passkey's quick grid) into
# $OUT/dgq3-best-passkey/, and the 4.0-bit plan at SmolLM2's longest length (8000 tokens, as
# dgq3-passkey-8k) into $OUT/dgq3-best-passkey-8k/; dgq3-passkey.ipynb adds them to its block.
# About 40 min on the 2-core machine.
best_plans_passkey() {
  local plans=()
  mapfile -t plans < <(best_plan_specs smollm2)
  PASSKEY_EVAL_ARGS=(--keys pre-rope)
  passkey_run "$OUT/dgq3-best-passkey" smollm2 1024,2048 0,50,100 10 fp16 "${DGQ3_BEST_LEVELS[1]}" "${plans[@]}"
  passkey_run "$OUT/dgq3-best-passkey-8k" smollm2 8000 0,50,100 2 fp16 "${plans[0]}"
  PASSKEY_EVAL_ARGS=()
}
# dgq3-roles: dgq3-best's setting with K and V of each layer allocated apart (KVTuner's per-layer
# K/V precision pairs): K levels of 3, 4, 5 bits and V levels of 3, 4, 5 bits, each measured on
# its role alone; plans of K/V pairs (tools/layer-sensitivity.py --k-level/--v-level), their
# controls and the yardsticks into $OUT/dgq3-roles/; the same notebook with LAYERS_NAME=dgq3-roles.
DGQ3_ROLE_LEVELS=("k:dgq3:kbits=3,center=kv,hi_frac=0.05,nl=kv" "k:dgq3:center=kv,hi_frac=0.05,nl=kv"
  "k:dgq3:kbits=5,center=kv,hi_frac=0.05,nl=kv" "v:dgq3:vbits=3,center=kv,hi_frac=0.05,nl=kv"
  "v:dgq3:center=kv,hi_frac=0.05,nl=kv" "v:dgq3:vbits=5,center=kv,hi_frac=0.05,nl=kv")
run_dgq3-roles() { layer_plan_experiment dgq3-roles pre-rope "${DGQ3_ROLE_LEVELS[@]}"; }
# layer_plan_experiment NAME KEYS LEVEL...: sensitivity, plans and their evaluation (above) into
# $OUT/NAME/, keys stored at KEYS (post-rope or pre-rope). A LEVEL "k:SPEC" or "v:SPEC" is a level
# of that role alone (--k-level/--v-level); such levels are not evaluated uniformly.
layer_plan_experiment() {
  local name="$1" keys="$2"; shift 2
  local levels=("$@") dir="$OUT/$name" model kind spec args plan_file budget yard
  local key_args=()
  [ "$keys" = post-rope ] || key_args=(--keys "$keys")
  mkdir -p "$dir"
  e2e_inputs
  for model in smollm2 gemma3; do
    plan_file="$dir/plans-$model.json"
    if [ -f "$plan_file" ] && reusable_summary "$plan_file"; then
      log "$name $model: plans done before"
    else
      args=()
      for kind in code legal poetry prose; do args+=(--text "out/eval-texts/$model-$kind-clean.h5"); done
      for spec in "${levels[@]}"; do
        case "$spec" in
          k:*) args+=(--k-level "${spec#k:}") ;;
          v:*) args+=(--v-level "${spec#v:}") ;;
          *) args+=(--level "$spec") ;;
        esac
      done
      for budget in "${DGQ3_LAYER_BUDGETS[@]}"; do args+=(--budget "$budget"); done
      log "$name $model: per-layer sensitivity (${#levels[@]} levels, keys $keys)"
      .venv/bin/python tools/layer-sensitivity.py --model "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}" \
        "${args[@]}" --window 6144,512 --ctx 512 --keys "$keys" --dgq "$DGQ" -o "$plan_file"
    fi
    # The yardsticks post-RoPE, as llama.cpp runs them (with the rest when the keys are there too).
    yard=(--scheme "q4_0:rot=hadamard" --scheme "q5_0:rot=hadamard")
    args=()
    [ "$keys" = post-rope ] && args=("${yard[@]}")
    for spec in "${levels[@]}"; do [[ "$spec" == [kv]:* ]] || args+=(--scheme "$spec"); done
    while IFS= read -r spec; do args+=(--scheme "$spec"); done < <(.venv/bin/python -c '
import json, sys
for plan in json.load(open(sys.argv[1]))["plans"].values():
    print(plan["spec"]); print(plan["control_spec"])' "$plan_file")
    for kind in code legal poetry prose; do
      layer_plan_eval "$name" "$model" "$kind" "$dir/$model-$kind" 1024 2 "${key_args[@]}" "${args[@]}"
      [ "$keys" = post-rope ] ||
        layer_plan_eval "$name" "$model" "$kind" "$dir/$model-$kind-yardsticks" 1024 2 "${yard[@]}"
    done
  done
}
# dgq3-low: the points at most 3 bits and the sinks (experiments/dgq3-low.toml), into dgq3-low.h5;
# notebook dgq3-low.ipynb. About 25 min on the 2-core machine.
run_dgq3-low() { frontier_sweep dgq3-low clean; }
# dgq3-passkey: the passkey task for the yardsticks and DGQ v3's points on SmolLM2, causal: the quick
# grid of long-context (1024 and 2048 tokens, depths 0, 50, 100 %, 10 keys) into $OUT/dgq3-passkey/,
# and SmolLM2's longest length (8000 tokens: its context is 8192 with BOS and the answer; depths 0,
# 50, 100 %, 2 keys, the default dgq3 left out: the runner's CPU time bounds the count) into
# $OUT/dgq3-passkey-8k/; notebook dgq3-passkey.ipynb publishes the dgq3-passkey block of §9e.
# About 75 min on the 2-core machine.
DGQ3_PASSKEY_SCHEMES=(fp16 "q4_0:rot=hadamard" "q5_0:rot=hadamard" dgq3 "dgq3:kbits=5,center=kv,hi_frac=0.05"
  "dgq3:vbits=3,center=kv,hi_frac=0.05")
# layer_plan_eval NAME MODEL KIND STEM CTX CHUNKS EVAL-ARGS...: one dgq eval of
# layer_plan_experiment into STEM.{h5,json,txt}, skipped when a reusable summary is there.
layer_plan_eval() {
  local name="$1" model="$2" kind="$3" stem="$4" ctx="$5" chunks="$6"; shift 6
  if [ -f "$stem.json" ] && reusable_summary "$stem.json"; then
    log "$name $model $kind: $(basename "$stem") done before"
    return
  fi
  log "$name $model $kind: $(basename "$stem")"
  "$DGQ" eval --model "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}" \
    --text "out/eval-texts/$model-$kind-clean.h5" --ctx "$ctx" --chunks "$chunks" --cache causal "$@" \
    -o "$stem.h5" --force --json "$stem.json" ${MIXED_FLAG[@]+"${MIXED_FLAG[@]}"} > "$stem.txt.partial"
  mv "$stem.txt.partial" "$stem.txt"
}
run_dgq3-passkey() {
  e2e_inputs
  passkey_run "$OUT/dgq3-passkey" smollm2 1024,2048 0,50,100 10 "${DGQ3_PASSKEY_SCHEMES[@]}"
  passkey_run "$OUT/dgq3-passkey-8k" smollm2 8000 0,50,100 2 fp16 "q4_0:rot=hadamard" "q5_0:rot=hadamard" \
    "dgq3:kbits=5,center=kv,hi_frac=0.05" "dgq3:vbits=3,center=kv,hi_frac=0.05"
}
frontier_sweep() {
  local name="$1" only_clean="${2:-}" config copy model texts kind spec
  config="$(config_of "$name")"
  copy="$OUT/configs/$name.toml"
  if ((quick)) || [ -n "$only_clean" ]; then texts=(code-clean legal-clean poetry-clean prose-clean)
  else texts=(code-clean code-noise10 legal-clean legal-noise10 poetry-clean poetry-noise10 prose-clean prose-noise10)
  fi
  e2e_inputs
  : > "$copy.partial"
  while IFS= read -r line; do
    if [ "$line" = "  #@ dgq2-schemes" ]; then
      while IFS= read -r spec; do
        [[ -z "$spec" || "$spec" == \#* ]] || printf '  "%s",\n' "$spec" >> "$copy.partial"
      done < experiments/frontier-dgq2.txt
    elif [ "$line" = "#@ eval-models" ]; then
      for model in smollm2 gemma3; do
        printf '[[eval.model]]\npath = "%s"\nlabel = "%s"\ntexts = [' \
          "$(realpath "${DGQ_MODELS_DIR:-models}/${E2E_MODEL_FILES[$model]}")" "$model" >> "$copy.partial"
        for kind in "${texts[@]}"; do printf '"%s", ' "$repo/out/eval-texts/$model-$kind.h5" >> "$copy.partial"; done
        printf ']\n' >> "$copy.partial"
      done
    else
      printf '%s\n' "$line" >> "$copy.partial"
    fi
  done < "$config"
  mv "$copy.partial" "$copy"
  log "sweep $name ($copy)"
  "$DGQ" sweep "$copy" -o "$OUT/$name.h5" --progress ${MIXED_FLAG[@]+"${MIXED_FLAG[@]}"}
}

# Memory: `dgq memory` (exact bytes per scheme from each scheme's own accounting) for each
# model shape at 8K/32K/128K tokens, as JSON (`--json`, written atomically by dgq) for the
# notebook; the console table is kept next to it for reading.
run_memory() {
  local model
  for model in llama-3.1-8b llama-3-70b; do
    log "memory $model"
    "$DGQ" memory --model "$model" --tokens 8192,32768,131072 --json "$OUT/memory-$model.json" \
      > "$OUT/memory-$model.txt.partial"
    mv "$OUT/memory-$model.txt.partial" "$OUT/memory-$model.txt"
  done
}

notebook() {
  local name="$1"
  # frontier-confirm's results are read by the frontier notebook (FRONTIER_NAME picks the file).
  if [ "$name" = frontier-confirm ]; then FRONTIER_NAME=frontier-confirm notebook frontier; return; fi
  if [ "$name" = frontier-causal ]; then notebook causal; return; fi
  if [ "$name" = frontier-serving ]; then notebook serving; return; fi
  if [ "$name" = long-context ]; then notebook long_context; return; fi
  if [ "$name" = dgq3-best ]; then LAYERS_NAME=dgq3-best notebook dgq3-layers; notebook dgq3-passkey; return; fi
  if [ "$name" = dgq3-roles ]; then LAYERS_NAME=dgq3-roles notebook dgq3-layers; return; fi
  # dgq3 ends with dgq3-passkey, whose block has its own notebook.
  if [ "$name" = dgq3 ]; then
    notebook dgq3-ablation; notebook dgq3-low; notebook dgq3-prerope; notebook dgq3-grid; notebook dgq3-layers; notebook dgq3-best; notebook dgq3-roles; notebook dgq3-passkey; return
  fi
  if [ "$name" = dgq3-ablation ]; then name=dgq3; fi
  log "notebook $name"
  (cd notebooks && "$repo/$JUPYTER" nbconvert --to notebook --execute "$name.ipynb" \
      --output-dir "$OUT/notebooks" --log-level WARN)
}

for name in "${names[@]}"; do
  [ "$name" = claims ] || "run_$name"
  notebook "$name"
done
# The ledger quotes every experiment: rebuild it after any of them (missing ones say "not run").
[[ " ${names[*]} " == *" claims "* ]] || notebook claims
log "done: ${names[*]}"

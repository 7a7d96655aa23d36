# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: DGQ v3's layer-plan experiments (dgq3-layers, dgq3-best,
# dgq3-roles): per-layer sensitivity, plans, and their evaluation.

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

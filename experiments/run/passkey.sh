# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the passkey task of one model through a list of schemes (used by
# long-context, dgq3-passkey and dgq3-best).

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

# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the language models and their token files (every language-model
# experiment reads them through E2E_MODEL_FILES and e2e_inputs), and the e2e experiment.

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

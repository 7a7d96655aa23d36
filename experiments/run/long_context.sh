# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the long-context experiment (causal cache at long contexts, the
# passkey task, the runner's throughput beside llama-perplexity).

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

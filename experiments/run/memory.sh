# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the memory experiment (arithmetic, no traces).

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

# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the eval sweeps of the frontier family (frontier, -confirm,
# -causal, -serving) and frontier_sweep, which the dgq3 sweeps use too.

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

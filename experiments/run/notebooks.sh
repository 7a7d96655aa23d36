# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the notebook that turns an experiment's results into its
# figures and fragments (some experiments share one, or end with several).

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

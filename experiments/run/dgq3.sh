# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: DGQ v3's experiments made of eval sweeps and passkey runs (dgq3,
# dgq3-ablation, -prerope, -grid, -low, -passkey); the layer-plan ones are in layer_plans.sh.

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
run_dgq3-passkey() {
  e2e_inputs
  passkey_run "$OUT/dgq3-passkey" smollm2 1024,2048 0,50,100 10 "${DGQ3_PASSKEY_SCHEMES[@]}"
  passkey_run "$OUT/dgq3-passkey-8k" smollm2 8000 0,50,100 2 fp16 "q4_0:rot=hadamard" "q5_0:rot=hadamard" \
    "dgq3:kbits=5,center=kv,hi_frac=0.05" "dgq3:vbits=3,center=kv,hi_frac=0.05"
}

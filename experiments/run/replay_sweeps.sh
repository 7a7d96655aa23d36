# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the replay sweeps over synthetic and shipped traces (the
# default experiments but memory).

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

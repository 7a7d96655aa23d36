# shellcheck shell=bash disable=SC2034,SC2154  # run.sh sets the variables read here and reads those set
# Sourced by experiments/run.sh: the helpers every experiment family uses (logging, this build's
# version and the mixed-versions flag, reusable results, the config of an experiment).

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

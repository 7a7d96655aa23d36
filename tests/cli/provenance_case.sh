#!/usr/bin/env bash
# Provenance cases that need more than one dgq call (inputs from
# make_cli_fixtures, FIXTURES/prov/; see provenance_fixtures.hpp).
#   provenance_case.sh resume-refused DGQ FIXTURES  a sweep resumed over a run of another dgq
#       version exits 2 with one line naming both versions and leaves the results file as it was.
#   provenance_case.sh resume-allowed DGQ FIXTURES  with --allow-mixed-versions it resumes, runs
#       nothing, and `dgq inspect` still shows each run's own version.
#   provenance_case.sh merge-allowed DGQ FIXTURES   `dgq merge --allow-mixed-versions` keeps
#       each run's own version.
set -u
mode=$1 dgq=$2 fix=$3
prov="$fix/prov"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*; do echo "--- $f:" >&2; cat "$f" >&2; done
  exit 1
}
this_version=$("$dgq" --version | awk '{print $NF}')
hash='[0-9a-f]{16}'

case "$mode" in
  resume-refused)
    cp "$prov/other-version.h5" "$work/r.h5"
    cp "$work/r.h5" "$work/before.h5"
    "$dgq" sweep "$prov/sweep.toml" -o "$work/r.h5" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    [ "$rc" -eq 2 ] || fail "exit code $rc, expected 2"
    [ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "stderr should be one line"
    grep -Eq "^dgq: error: $work/r\.h5: run q8_0@good was written by dgq not-this-build \(config $hash\), this is dgq $this_version \(config $hash\); rerun into a new output or pass --allow-mixed-versions$" \
      "$work/stderr" || fail "stderr should name both versions"
    cmp -s "$work/r.h5" "$work/before.h5" || fail "the results file was changed"
    [ ! -e "$work/r.h5.partial" ] || fail "a partial file was left behind"
    ;;
  resume-allowed)
    cp "$prov/allowed.h5" "$work/r.h5"
    "$dgq" sweep "$prov/sweep.toml" -o "$work/r.h5" --allow-mixed-versions >"$work/stdout" 2>"$work/stderr" \
      || fail "sweep --allow-mixed-versions failed"
    grep -q "2 already complete, 0 run now" "$work/stdout" || fail "both runs should be kept as complete"
    "$dgq" inspect "$work/r.h5" >"$work/inspect" 2>&1 || fail "inspect failed"
    grep -Eq "^run q8_0@good: dgq version not-this-build, config hash $hash$" "$work/inspect" || fail "q8_0 lost its label"
    grep -Eq "^run fp16@good: dgq version $this_version, config hash $hash$" "$work/inspect" || fail "fp16 lost its label"
    ;;
  merge-allowed)
    "$dgq" merge "$work/m.h5" "$prov/shard0.h5" "$prov/shard1-other.h5" --allow-mixed-versions \
      >"$work/stdout" 2>"$work/stderr" || fail "merge --allow-mixed-versions failed"
    grep -q "merged 2 file(s) into $work/m.h5: 2 run(s)" "$work/stdout" || fail "both runs should be merged"
    "$dgq" inspect "$work/m.h5" >"$work/inspect" 2>&1 || fail "inspect failed"
    grep -Eq "^run q8_0@good: dgq version not-this-build," "$work/inspect" || fail "q8_0 lost its label"
    grep -Eq "^run fp16@good: dgq version $this_version," "$work/inspect" || fail "fp16 lost its label"
    ;;
  *) echo "provenance_case.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "ok: $mode"

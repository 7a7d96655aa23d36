#!/usr/bin/env bash
# Runs CI as CI runs it, N times on one commit, and says whether every run gave the same verdict
# and the same counts (deterministic CI: the same commit must always get the same verdict).
#   tools/ci-repeat.sh [N=3] [WORKDIR=/tmp/dgq-ci-repeat]
# Each run: a fresh `git clone` of this checkout's HEAD into WORKDIR/run-I<padding>/repo with ../shared
# beside it (a link to this checkout's ../shared), then `CI=true bash .ci/run` with no standard
# input, its output in WORKDIR/run-I/log.txt. Compared across runs: the exit code and every
# summary line (ctest's "tests passed" lines, the sanitizer and fuzz stage's lines) with
# durations removed. Runs one after the other (CI has 2 cores; parallel runs would only slow
# each other). Prints one line per run and a closing verdict; exit 1 when the runs differ.
# The padding (run I's folder name 8*(I-1) characters longer than run 1's) puts each clone at a
# path of another length: the verdict and the counts must not depend on where the checkout is
# (the fuzz stage's counts once did: docs/robustness.md, "Sanitizers and fuzzing in CI").
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
workdir=${2:-/tmp/dgq-ci-repeat}
commit=$(git rev-parse HEAD)
shared=$(cd .. && pwd)/shared
mkdir -p "$workdir"
summary_of() {  # LOG: the lines that decide and count, durations and paths removed
  grep -E '(tests passed|tests failed|^fuzz:|^fuzz-|^sanitize:.*(passed|failed|finding)|FINDING)' "$1" |
    sed -E 's/[0-9]+(\.[0-9]+)? (s|sec|seconds)\b/<t>/g; s#/[^ ]*/run-[0-9]+(-padding)*/#<run>/#g'
}
first=""
same=1
for i in $(seq 1 "$runs"); do
  dir=$workdir/run-$i
  for ((pad = 2; pad <= i; pad++)); do dir+=-padding; done
  rm -rf "$dir" && mkdir -p "$dir"
  git clone -q . "$dir/repo" && git -C "$dir/repo" checkout -q "$commit"
  [ -d "$shared" ] && ln -s "$shared" "$dir/shared"
  start=$SECONDS
  (cd "$dir/repo" && CI=true bash .ci/run </dev/null >"$dir/log.txt" 2>&1)
  rc=$?
  summary_of "$dir/log.txt" >"$dir/summary.txt"
  echo "ci-repeat: run $i of $runs: exit $rc after $((SECONDS - start)) s ($(wc -l <"$dir/summary.txt") summary lines, $dir/log.txt)"
  echo "exit $rc" >>"$dir/summary.txt"
  if [ -z "$first" ]; then
    first=$dir/summary.txt
  elif ! diff -q "$first" "$dir/summary.txt" >/dev/null; then
    same=0
    diff "$first" "$dir/summary.txt" | head -20
  fi
done
if [ "$same" = 1 ]; then
  echo "ci-repeat: $runs runs of $commit: same verdict and same counts ($(tail -1 "$first"))"
else
  echo "ci-repeat: $runs runs of $commit DIFFER (above)"
  exit 1
fi

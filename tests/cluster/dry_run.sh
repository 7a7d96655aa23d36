#!/usr/bin/env bash
# dry_run.sh DGQ WORKDIR: `dgq slurm` without a cluster.
#   1. --dry-run with every option writes both scripts (valid bash, the options as #SBATCH
#      lines) and prints the sbatch commands without running them;
#   2. bad submissions are errors that write nothing: more tasks than runs, a --dir that
#      #SBATCH lines cannot hold, a recorded trace that does not exist;
#   3. --merge before any task ran names every shard and merges nothing;
#   4. the generated scripts, run by hand as Slurm would (SLURM_ARRAY_TASK_ID=i), produce
#      shards whose merge equals the unsharded local run value for value (dgq merge's
#      duplicate check; tests/cluster/sweep_on_slurm.sh says why not byte for byte); with
#      every shard complete, a new submission submits only the merge job.
set -euo pipefail
dgq=$(realpath "$1")
work=$2
config="$(cd "$(dirname "$0")" && pwd)/tiny-sweep.toml"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== 1. --dry-run with every option"
"$dgq" slurm "$config" -o full.h5 --tasks 4 --partition gpu --time 2:00:00 --cpus-per-task 4 --mem 8G \
  --gpus-per-task 1 --device cuda --max-running 2 --sbatch-line=--qos=long --job-name kv \
  --sbatch /nonexistent/sbatch --dry-run | tee full.txt
grep -q "would run: '/nonexistent/sbatch' --parsable '$work/full.h5.slurm/sweep.sbatch'" full.txt || fail "array cmd"
grep -q "would run: .* --dependency=afterany:ARRAY_JOB_ID '$work/full.h5.slurm/merge.sbatch'" full.txt || fail "merge"
for s in full.h5.slurm/sweep.sbatch full.h5.slurm/merge.sbatch; do
  bash -n "$s" || fail "$s is not valid bash"
  [ -x "$s" ] || fail "$s is not executable"
done
for line in "--array=0-3%2" --partition=gpu --time=2:00:00 --cpus-per-task=4 --mem=8G --gpus-per-task=1 \
  --qos=long --job-name=kv --requeue; do
  grep -qx -- "#SBATCH $line" full.h5.slurm/sweep.sbatch || fail "sweep.sbatch lacks #SBATCH $line"
done
grep -q -- "--device 'cuda' --progress$" full.h5.slurm/sweep.sbatch || fail "task command"
grep -qx -- "#SBATCH --job-name=kv-merge" full.h5.slurm/merge.sbatch || fail "merge job name"
[ -z "$(ls full.h5.slurm/shards)" ] || fail "a dry run ran something"

echo "== 2. bad submissions write nothing"
if "$dgq" slurm "$config" -o many.h5 --tasks 11 --dry-run 2>many.err; then fail "--tasks 11 accepted"; fi
grep -q "^dgq: error: .*tiny-sweep.toml: --tasks 11 for a sweep of 10 run(s)" many.err || fail "$(cat many.err)"
[ ! -e many.h5.slurm ] || fail "many.h5.slurm written"
if "$dgq" slurm "$config" -o x.h5 --tasks 2 --dir "with space" --dry-run 2>space.err; then fail "space accepted"; fi
grep -q "^dgq: error: --dir '.*with space' contains ' '" space.err || fail "$(cat space.err)"

printf 'schemes = ["fp16", "q8_0"]\ntraces = ["no-such-trace.h5"]\n' >typo.toml
if "$dgq" slurm typo.toml -o typo.h5 --tasks 2 --dry-run 2>typo.err; then fail "typo accepted"; fi
grep -q "^dgq: error: .*: trace 'no-such-trace': .*no-such-trace.h5: no such file" typo.err || fail "$(cat typo.err)"
[ ! -e typo.h5.slurm ] || fail "typo.h5.slurm written"

echo "== 3. --merge before any task ran"
"$dgq" slurm "$config" -o r.h5 --tasks 4 --dry-run >/dev/null
if "$dgq" slurm "$config" -o r.h5 --tasks 4 --merge >merge0.out 2>merge0.err; then fail "merged nothing"; fi
cat merge0.out merge0.err
[ "$(grep -c "INCOMPLETE" merge0.out)" = 4 ] || fail "every shard should be named"
grep -q "shard(s) 0, 1, 2, 3 of 4 incomplete (10 run(s) missing" merge0.err || fail "merge error"
[ ! -e r.h5 ] && [ ! -e r.h5.partial ] || fail "r.h5 written"

echo "== 4. the scripts run by hand as Slurm would"
for i in 0 1 2 3; do
  SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=1 bash r.h5.slurm/sweep.sbatch >task-$i.out 2>&1 || fail "task $i"
  grep -q "^sweep: .* run(s) done" task-$i.out || fail "task $i: no progress line"
done
if SLURM_ARRAY_TASK_ID= bash r.h5.slurm/sweep.sbatch 2>/dev/null; then fail "script ran outside an array"; fi
bash r.h5.slurm/merge.sbatch | tee merge.out
grep -q "merged 4 shard(s) into $work/r.h5: 10 run(s)" merge.out || fail "merge output"
"$dgq" sweep "$config" -o local.h5 >/dev/null
"$dgq" merge check.h5 local.h5 r.h5 | tee check.txt
grep -q ": 10 run(s), 10 identical duplicate(s), 0 incomplete run(s) skipped" check.txt || fail "r.h5 != local.h5"
echo "merged shards == local run, value for value"
# Every shard complete: a new submission writes no array script and submits only the merge.
rm r.h5.slurm/sweep.sbatch
"$dgq" slurm "$config" -o r.h5 --tasks 4 --dry-run | tee again.txt
grep -q "4 shard(s) already complete$" again.txt || fail "complete shards not recognised"
grep -q "would run: 'sbatch' --parsable '$work/r.h5.slurm/merge.sbatch'$" again.txt || fail "merge without dependency"
[ "$(grep -c "would run" again.txt)" = 1 ] || fail "an array would be submitted"
[ ! -e r.h5.slurm/sweep.sbatch ] || fail "an array script was written"
echo "PASS"

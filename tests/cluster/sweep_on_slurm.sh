#!/usr/bin/env bash
# sweep_on_slurm.sh DGQ WORKDIR: `dgq slurm` against a live Slurm (run it inside
# tests/cluster/with_slurm.sh, which exports SLURM_CONF). Three checks:
#   1. a 4-task array plus merge of tests/cluster/tiny-sweep.toml: every task and the merge
#      complete, the task logs carry progress lines, and the merged file holds the same runs as
#      the unsharded local run, VALUE FOR VALUE (see "Why values" below);
#   2. a second submission, held: the same command refuses to submit again while its jobs are
#      queued; a merge started while tasks are queued submits itself again after the array;
#      one array index is cancelled (scancel JOB_2): the merge job still runs (afterany),
#      fails, and names the missing shard; nothing is merged;
#   3. the same dgq slurm command again submits only the missing shard (array "2"), leaves the
#      finished shard files untouched (inode + mtime: every write of a results file is a new
#      file renamed into place); its merge equals the local run value for value, and equals
#      the first submission's merge BYTE FOR BYTE (cmp);
#   4. a task requeued (scontrol requeue) after its first pass resumes from its shard file:
#      the restart skips the runs already complete and the merge equals a local run (if the
#      requeue lets the merge job start early, it submits itself again after the task).
# Why values: results files carry no timestamps, but object placement and a run group's header
# message order depend on how the file was written (dgq merge copies input by input; H5Ocopy
# keeps the header order of the pass that first wrote the run, and shard passes differ from
# the unsharded sweep's); docs/cluster.md shows the measurement. `dgq merge CHECK LOCAL MERGED`
# compares every run of both (attributes, structure, dataset types and values, bit for bit)
# and accepts only identical duplicates: "10 run(s), 10 identical duplicate(s)" means the same
# run names with the same values. Two merges of the same shard layout are the same file,
# hence cmp between the two Slurm submissions.
set -euo pipefail
dgq=$(realpath "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
config="$here/tiny-sweep.toml"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.slurm/logs/*.out; do
    [ -e "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
  done
  exit 1
}
step() { echo "== $*"; }

# Waits until none of the given jobs (comma-separated ids, arrays included) is queued or
# running; at most $2 seconds.
wait_jobs() {
  local deadline=$((SECONDS + $2))
  while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
    ((SECONDS < deadline)) || fail "jobs $1 still in the queue after $2 s: $(squeue -j "$1" 2>&1)"
    sleep 0.5
  done
}
# The state of every record of a job (one per array task), e.g. "COMPLETED COMPLETED".
job_states() { scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | uniq -c | xargs; }
# The array task ids of a job, ascending, e.g. "0 1 3".
array_tasks() { scontrol -o show job "$1" | grep -o 'ArrayTaskId=[0-9]*' | cut -d= -f2 | sort -n | xargs; }
# The job ids printed by dgq slurm.
array_job_of() { sed -n 's/^submitted array job \([0-9]*\).*/\1/p' "$1"; }
merge_job_of() { sed -n 's/^submitted merge job \([0-9]*\).*/\1/p' "$1"; }
# Every run of $1 is in $2 with identical attributes and values, and no other run ($3 runs).
same_runs() {
  local n=${3:-10}
  "$dgq" merge "check-$2" "$1" "$2" >"check-$2.txt" 2>&1 || { cat "check-$2.txt"; fail "$2 vs $1"; }
  cat "check-$2.txt"
  grep -q ": $n run(s), $n identical duplicate(s), 0 incomplete run(s) skipped" "check-$2.txt" ||
    fail "$2 does not hold the same runs and values as $1"
}
# Identity of a file's current version: inode and modification time (ns).
file_version() { stat -c '%i %y' "$1"; }

step "reference: the unsharded sweep, run locally"
"$dgq" sweep "$config" -o local.h5 --threads 1 | tee local.txt
grep -q "10 run(s) in the sweep" local.txt || fail "the tiny sweep should have 10 runs"

step "1. a 4-task array plus merge"
"$dgq" slurm "$config" -o a.h5 --tasks 4 --cpus-per-task 1 --time 5 | tee a-submit.txt
array=$(array_job_of a-submit.txt) merge=$(merge_job_of a-submit.txt)
[ -n "$array" ] && [ -n "$merge" ] || fail "dgq slurm did not report two job ids"
wait_jobs "$array,$merge" 60
[ "$(job_states "$array")" = "4 COMPLETED" ] || fail "array tasks: $(job_states "$array"), expected 4 COMPLETED"
[ "$(job_states "$merge")" = "1 COMPLETED" ] || fail "merge job: $(job_states "$merge")"
for i in 0 1 2 3; do
  log=a.h5.slurm/logs/sweep-${array}_$i.out
  grep -q "^dgq slurm: .* task $i/4 of job $array on .* 1 thread(s)" "$log" || fail "$log: no task header line"
  grep -q "^sweep: .* run(s) done" "$log" || fail "$log: no progress line"
done
grep -q "merged 4 shard(s) into .*/a.h5: 10 run(s)" a.h5.slurm/logs/merge-$merge.out || fail "merge log"
same_runs local.h5 a.h5
echo "merged a.h5 == local run, value for value"

step "2. one task cancelled: the merge job names the missing shard"
submit_b() { "$dgq" slurm "$config" -o b.h5 --tasks 4 --sbatch-line=--hold | tee "$1"; }
submit_b b-submit-1.txt
array=$(array_job_of b-submit-1.txt) merge=$(merge_job_of b-submit-1.txt)
# While its jobs are queued, the same command refuses: a second array would race the first.
if submit_b b-submit-refused.txt 2>b-refused.err; then fail "resubmitted while the first is queued"; fi
grep -q "^dgq: error: job(s) $array, $merge of this submission (.*/b.h5.slurm) are still queued" b-refused.err ||
  fail "no refusal: $(cat b-refused.err)"
# A merge that starts while array tasks are still queued (as a requeue can make it) submits
# itself again after them instead of failing; here run by hand as if inside a job.
SLURM_JOB_ID=0 "$dgq" slurm "$config" -o b.h5 --tasks 4 --merge | tee b-early-merge.txt
early=$(sed -n "s/.* are still queued or running (requeued?): merge submitted again as job \([0-9]*\), after them$/\1/p" \
  b-early-merge.txt)
[ -n "$early" ] || fail "an early merge did not submit itself again"
[ "$(scontrol -o show job "$early" | grep -o 'Dependency=[^ ]*')" = "Dependency=afterany:${array}_*(unfulfilled)" ] ||
  fail "the merge submitted again does not wait for the array: $(scontrol -o show job "$early")"
scontrol release "$early"
scancel "${array}_2"
scontrol release "$array" "$merge"
wait_jobs "$array,$merge,$early" 60
[ "$(job_states "$early")" = "1 FAILED" ] || fail "the merge submitted again should fail too: $(job_states "$early")"
# A pending array index that is cancelled leaves the array: tasks 0, 1, 3 remain, all ran.
[ "$(job_states "$array")" = "3 COMPLETED" ] || fail "array tasks: $(job_states "$array")"
[ "$(array_tasks "$array")" = "0 1 3" ] || fail "array task ids: $(array_tasks "$array"), expected 0 1 3"
[ ! -e "b.h5.slurm/logs/sweep-${array}_2.out" ] || fail "the cancelled task 2 ran"
[ "$(job_states "$merge")" = "1 FAILED" ] || fail "merge job should fail, is $(job_states "$merge")"
merge_log=b.h5.slurm/logs/merge-$merge.out
cat "$merge_log"
grep -q "^shard 2/4: INCOMPLETE, 2 of 2 run(s) missing" "$merge_log" || fail "merge log does not name shard 2"
grep -q "^dgq: error: not merging into .*/b.h5: shard(s) 2 of 4 incomplete" "$merge_log" || fail "merge log: no error"
[ ! -e b.h5 ] || fail "b.h5 was written although a shard is missing"

step "3. the same command again runs only the missing shard"
declare -A before
for i in 0 1 3; do before[$i]=$(file_version b.h5.slurm/shards/shard-$i-of-4.h5); done
submit_b b-submit-2.txt
grep -q "3 shard(s) already complete, 1 to run (array 2, 2 run(s) missing)" b-submit-2.txt || fail "resubmission"
array=$(array_job_of b-submit-2.txt) merge=$(merge_job_of b-submit-2.txt)
scontrol release "$array" "$merge"
wait_jobs "$array,$merge" 60
[ "$(job_states "$array")" = "1 COMPLETED" ] || fail "resubmitted array: $(job_states "$array")"
[ "$(array_tasks "$array")" = "2" ] || fail "resubmitted array task ids: $(array_tasks "$array"), expected 2"
[ "$(job_states "$merge")" = "1 COMPLETED" ] || fail "merge after resubmission: $(job_states "$merge")"
logs=$(cd b.h5.slurm/logs && ls sweep-"${array}"_*.out)
[ "$logs" = "sweep-${array}_2.out" ] || fail "resubmission ran tasks: $logs"
for i in 0 1 3; do
  [ "$(file_version b.h5.slurm/shards/shard-$i-of-4.h5)" = "${before[$i]}" ] || fail "shard $i was rewritten"
done
echo "finished shards 0, 1, 3 untouched (inode and mtime unchanged)"
same_runs local.h5 b.h5
cmp a.h5 b.h5 || fail "the two submissions' merges differ"
echo "merged b.h5 == local run, value for value; == a.h5 byte for byte (cmp)"
step "4. a task requeued mid-shard resumes from its shard file"
rq_config="$here/requeue-sweep.toml"
"$dgq" sweep "$rq_config" -o rq-local.h5 --threads 1 >/dev/null
"$dgq" slurm "$rq_config" -o rq.h5 --tasks 1 | tee rq-submit.txt
array=$(array_job_of rq-submit.txt) merge=$(merge_job_of rq-submit.txt)
shard=rq.h5.slurm/shards/shard-0-of-1.h5
deadline=$((SECONDS + 60))
until [ -e "$shard" ]; do  # pass 1 (the shipped trace) written; pass 2 takes seconds more
  ((SECONDS < deadline)) || fail "pass 1 not written after 60 s"
  sleep 0.1
done
[ "$(squeue -h -j "${array}_0" -o %t)" = R ] || fail "the task ended before it could be requeued"
scontrol requeue "${array}_0"
# Slurm holds a requeued job back (BeginTime, about 2 min); let it start again sooner, but not
# within the second of the requeue: a restart then is killed as "Job credential revoked".
for _ in $(seq 1 100); do
  [ "$(squeue -h -j "${array}_0" -o %t)" = PD ] && break
  sleep 0.1
done
sleep 2
scontrol update jobid="${array}_0" starttime=now
wait_jobs "$array,$merge" 90
# The requeue may end the array's dependency early: the merge job then finds the shard
# incomplete with the task queued again, and submits itself once more after it.
again=$(sed -n 's/.*merge submitted again as job \([0-9]*\), after them$/\1/p' "rq.h5.slurm/logs/merge-$merge.out")
if [ -n "$again" ]; then
  echo "(the first merge job started before the requeued task; it resubmitted itself as job $again)"
  wait_jobs "$again" 60
  merge=$again
fi
[ "$(job_states "$merge")" = "1 COMPLETED" ] || fail "merge after requeue: $(job_states "$merge")"
grep -q "merged 1 shard(s) into .*/rq.h5: 4 run(s)" "rq.h5.slurm/logs/merge-$merge.out" || fail "merge log"
log=rq.h5.slurm/logs/sweep-${array}_0.out
cat "$log"
grep -q "DUE TO JOB REQUEUE" "$log" || fail "$log: the task was not requeued"
grep -q "^dgq slurm: .* task 0/1 of job $array on .*, restart 1," "$log" || fail "$log: no restart"
grep -q "4 in shard 0/1, 2 already complete, 2 run now" "$log" || fail "$log: the restart did not resume"
same_runs rq-local.h5 rq.h5 4
echo "requeued task resumed: pass 1's 2 runs kept, 2 run after the restart; merged == local run"
echo "PASS"

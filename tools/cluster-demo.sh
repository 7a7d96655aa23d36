#!/usr/bin/env bash
# tools/cluster-demo.sh [BUILD_DIR]: the transcript shown in docs/cluster.md, run against a
# private single-node Slurm (tests/cluster/with_slurm.sh: root, Debian's slurm-wlm + munge).
# Submits experiments/noise-quick.toml as a 4-task array plus merge into out/cluster-demo/ and
# watches it; then a second submission with one task cancelled: the merge job's report, a
# merge by hand of the complete shards, and the resubmission that finishes the work.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build}")
[ -x "$build/sim/dgq" ] || { echo "cluster-demo: no $build/sim/dgq (build first)" >&2; exit 2; }
export PATH="$build/sim:$PATH"
cd "$root"
rm -rf out/cluster-demo
mkdir -p out/cluster-demo
exec bash tests/cluster/with_slurm.sh bash -c '
set -euo pipefail
run() { echo "\$ $*"; "$@"; }
wait_gone() { while [ -n "$(squeue -h -j "$1" -o %i)" ]; do sleep 1; done; }
job_of() { sed -n "s/^submitted $1 job \([0-9]*\).*/\1/p" "$2"; }
d=out/cluster-demo
run dgq slurm experiments/noise-quick.toml -o $d/noise.h5 --tasks 4 --time 30:00 --cpus-per-task 1 | tee $d/submit1.txt
array=$(job_of array $d/submit1.txt) merge=$(job_of merge $d/submit1.txt)
sleep 15
run squeue
run tail -n 3 "$d/noise.h5.slurm/logs/sweep-${array}_0.out"
wait_gone "$array,$merge"
run squeue
run cat "$d/noise.h5.slurm/logs/merge-$merge.out"
run ls $d $d/noise.h5.slurm $d/noise.h5.slurm/shards $d/noise.h5.slurm/logs

echo; echo "# A second submission; task 3 is cancelled while it waits for a CPU"
run dgq slurm experiments/noise-quick.toml -o $d/again.h5 --tasks 4 --time 30:00 | tee $d/submit2.txt
array=$(job_of array $d/submit2.txt) merge=$(job_of merge $d/submit2.txt)
run dgq slurm experiments/noise-quick.toml -o $d/again.h5 --tasks 4 --time 30:00 || true
run scancel "${array}_3"
wait_gone "$array,$merge"
echo "\$ scontrol show job $merge | grep -E \"JobState|ExitCode\""
scontrol show job "$merge" | grep -E "JobState|ExitCode"
run cat "$d/again.h5.slurm/logs/merge-$merge.out"
run dgq merge $d/partial.h5 $d/again.h5.slurm/shards/shard-0-of-4.h5 $d/again.h5.slurm/shards/shard-1-of-4.h5 \
  $d/again.h5.slurm/shards/shard-2-of-4.h5
run dgq slurm experiments/noise-quick.toml -o $d/again.h5 --tasks 4 --time 30:00 | tee $d/submit3.txt
array=$(job_of array $d/submit3.txt) merge=$(job_of merge $d/submit3.txt)
wait_gone "$array,$merge"
run ls $d/again.h5.slurm/logs
run cat "$d/again.h5.slurm/logs/merge-$merge.out"
'

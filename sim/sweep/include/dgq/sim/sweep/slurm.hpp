#pragma once
// Running a sweep on a Slurm cluster (docs/cluster.md): a job array whose task i runs shard
// i/N into its own results file, and a merge job that runs after every task has ended, checks
// that every shard is complete (naming the ones that are not) and only then merges.
//
// Everything here is text and file state, no Slurm calls: the sbatch scripts, the shard
// files' paths, and which shards are complete. Submitting and querying Slurm are in
// dgq/sim/slurm_submission.hpp.
#include <cstddef>
#include <string>
#include <vector>

#include "dgq/sim/sweep/sweep.hpp"

namespace dgq::sim {

// What the array's tasks run. Each kind is one entry of the table in
// sim/sweep/src/slurm/job_kinds.cpp (its subcommand and task arguments); adding a kind (e.g.
// `dgq eval` once its jobs are in the config) is one enum value and one table entry.
enum class SlurmJobKind { sweep };

struct SlurmOptions {
  SlurmJobKind kind = SlurmJobKind::sweep;
  std::string dgq;                                   // the dgq binary the jobs run (absolute path)
  std::string config;                                // the config (absolute path)
  std::string output;                                // the merged results file (absolute path)
  std::string dir;                                   // submission folder (absolute): *.sbatch, shards/, logs/
  std::size_t tasks = 1;                             // array size N
  std::string job_name;                              // the array's name; the merge job is "<job_name>-merge"
  std::string partition, time, mem;                  // empty: not set (the cluster's default)
  int cpus_per_task = 0;                             // 0: not set (Slurm's default, 1)
  int gpus_per_task = 0;                             // 0: not set
  std::string device = "cpu";                        // passed to the tasks: cpu | cuda
  std::size_t max_running = 0;                       // 0: no limit, else --array=...%K
  std::vector<std::string> extra_lines;              // "--qos=long" or "#SBATCH --qos=long"
  std::string sbatch = "sbatch", squeue = "squeue";  // the programs (the merge job uses both)
};

// DIR/shards/shard-<i>-of-<N>.h5, the results file of task i.
std::string slurm_shard_path(const SlurmOptions& o, std::size_t index);
std::string slurm_array_script_path(const SlurmOptions& o);  // DIR/<kind>.sbatch
std::string slurm_merge_script_path(const SlurmOptions& o);  // DIR/merge.sbatch

// "0-3", "1,3", "0-2,5-6": Slurm's --array syntax for ascending indices.
std::string slurm_array_ranges(const std::vector<std::size_t>& indices);

// The array job's script, for the given task indices (ascending, non-empty).
std::string slurm_array_script(const SlurmOptions& o, const std::vector<std::size_t>& indices);
// The merge job's script: `dgq slurm ... --merge` (check every shard, then merge; when a
// shard is incomplete while array tasks are still queued, e.g. requeued, it submits itself
// again after them).
std::string slurm_merge_script(const SlurmOptions& o);

// One shard's state on disk: which of its runs are complete in its results file.
struct SlurmShardState {
  std::size_t index = 0;
  std::string path;
  std::size_t expected = 0;          // runs of the shard
  std::vector<std::string> missing;  // expected runs not complete in the file (run order)
  bool file_exists = false;
  bool complete() const { return missing.empty(); }
};

// Every shard of the submission, in index order. Throws ParameterError when N exceeds the
// sweep's run count (a task would have nothing to do).
std::vector<SlurmShardState> slurm_shard_states(const SweepConfig& config, const SlurmOptions& o);

// "shard 3/4: incomplete, 2 of 3 run(s) missing (dgq@a, fp16@b), DIR/shards/shard-3-of-4.h5
// (no file)"; one line.
std::string describe_shard(const SlurmShardState& s, std::size_t tasks);
// The runs of every shard, and those of them not yet complete.
std::size_t expected_runs(const std::vector<SlurmShardState>& shards);
std::size_t missing_runs(const std::vector<SlurmShardState>& shards);

// Submitting: `SBATCH --parsable [--dependency=afterany:AFTER] SCRIPT` as one shell command
// (arguments quoted), and the job id in its output ("123" or "123;cluster").
std::string shell_quote(const std::string& text);  // 'text', embedded ' as '\''
std::string sbatch_command(const std::string& sbatch, const std::string& script, const std::string& after_job);
std::string parse_sbatch_job_id(const std::string& output);  // throws dgq::Error if there is none

// Before submitting: every recorded trace of the config exists (else ParameterError naming
// the config, the trace and the path), so that a typo fails here, not in every task.
void check_slurm_inputs(const SweepConfig& config);

// The jobs of `squeue -h -o '%A|%o'` (job id | command) whose command is one of `scripts`:
// this submission's array or merge job, still queued or running. Ascending job ids, each
// once (%A is the array's id for every one of its tasks).
std::vector<std::string> jobs_running_scripts(const std::string& squeue_output,
                                              const std::vector<std::string>& scripts);

}  // namespace dgq::sim

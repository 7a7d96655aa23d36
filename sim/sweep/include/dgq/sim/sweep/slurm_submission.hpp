#pragma once
// The steps of `dgq slurm` (docs/cluster.md) that act: resolving the submission's paths,
// refusing while its jobs are still queued, writing the scripts, submitting them with sbatch,
// and, in the merge job, checking the shards before merging. Unlike dgq/sim/sweep/slurm.hpp (text and
// file state only), these run Slurm's programs. The command (sim/cli/slurm.cpp) parses its
// arguments, calls these in order and prints what they return.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dgq/sim/sweep/slurm.hpp"
#include "dgq/sim/sweep/sweep.hpp"

namespace dgq::sim {

// What the command line gave: paths as typed, empty for "the default".
struct SlurmRequest {
  std::string config, output, dir, job_name, dgq;
  SlurmOptions slurm;  // the #SBATCH settings and the programs
};
// Absolute paths and the defaults: dir OUTPUT.slurm, dgq this binary, job name dgq-<config
// stem>. Throws ParameterError when the folder or job name holds what #SBATCH lines cannot.
SlurmOptions resolve_slurm_options(const SlurmRequest& request);

// Runs `sbatch --parsable [--dependency=afterany:AFTER] SCRIPT` and returns the job id; throws
// dgq::Error naming the command, its exit code and its output when it fails.
std::string submit_slurm_job(const std::string& sbatch, const std::string& script, const std::string& after_job);
// The jobs of this submission (running one of `scripts`) still queued or running, per squeue.
std::vector<std::string> slurm_jobs_in_flight(const std::string& squeue, const std::vector<std::string>& scripts);

// A submission: which shards still need running, and the scripts that run them.
struct SlurmSubmission {
  std::vector<SlurmShardState> shards;
  std::vector<std::size_t> pending;  // the indices of shards not yet complete
  std::string array_script, merge_script;
};
// Checks the config's inputs and reads the shards' states; unless dry_run, refuses (dgq::Error)
// while jobs of the same submission are queued or running, since two arrays writing the same
// shard files would race. Then creates the folders and writes the scripts (the array's only
// when shards are pending).
SlurmSubmission prepare_slurm_submission(const SweepConfig& config, const SlurmOptions& o, bool dry_run);

// The merge job's look at every shard file.
struct SlurmMergeCheck {
  std::vector<SlurmShardState> shards;
  std::vector<std::string> inputs;      // the shard files that exist
  std::vector<std::string> incomplete;  // the indices of incomplete shards
};
SlurmMergeCheck check_slurm_shards(const SweepConfig& config, const SlurmOptions& o);

// Inside the merge job: when shards are incomplete while array tasks are still queued or
// running (should a requeue or a hand-edited dependency let it start early), the merge is
// submitted again after them instead of failing; returns the new job's line to print. Nothing
// happens outside a Slurm job or where squeue cannot run (by hand, no Slurm): nothing to wait for.
std::optional<std::string> resubmit_merge_after_array(const SlurmOptions& o, const SlurmMergeCheck& check);
// The refusal when shards are incomplete and nothing is left to wait for.
std::string incomplete_shards_message(const SlurmOptions& o, const SlurmMergeCheck& check);

}  // namespace dgq::sim

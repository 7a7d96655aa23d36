// The merge job's side of `dgq slurm --merge`: check every shard, name the incomplete ones,
// and, when array tasks are still queued (requeued?), wait for them rather than fail.
#include <cstdlib>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm_submission.hpp"
#include "slurm/joined.hpp"

namespace dgq::sim {

SlurmMergeCheck check_slurm_shards(const SweepConfig& config, const SlurmOptions& o) {
  SlurmMergeCheck check;
  check.shards = slurm_shard_states(config, o);
  for (const auto& s : check.shards) {
    if (!s.complete()) check.incomplete.push_back(std::to_string(s.index));
    if (s.file_exists) check.inputs.push_back(s.path);
  }
  return check;
}

std::optional<std::string> resubmit_merge_after_array(const SlurmOptions& o, const SlurmMergeCheck& check) {
  if (std::getenv("SLURM_JOB_ID") == nullptr) return std::nullopt;
  std::vector<std::string> array_jobs;
  try {
    array_jobs = slurm_jobs_in_flight(o.squeue, {slurm_array_script_path(o)});
  } catch (const Error&) {
    return std::nullopt;
  }
  if (array_jobs.empty()) return std::nullopt;
  const std::string job = submit_slurm_job(o.sbatch, slurm_merge_script_path(o), joined(array_jobs, ":"));
  return "shard(s) " + joined(check.incomplete, ", ") + " incomplete while array job(s) " + joined(array_jobs, ", ") +
         " are still queued or running (requeued?): merge submitted again as job " + job + ", after them";
}

std::string incomplete_shards_message(const SlurmOptions& o, const SlurmMergeCheck& check) {
  return "not merging into " + o.output + ": shard(s) " + joined(check.incomplete, ", ") + " of " +
         std::to_string(o.tasks) + " incomplete (" + std::to_string(missing_runs(check.shards)) +
         " run(s) missing; task logs in " + o.dir +
         "/logs); rerun the same dgq slurm command to "
         "finish them, or dgq merge the complete shards by hand";
}

}  // namespace dgq::sim

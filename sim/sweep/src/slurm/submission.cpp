// prepare_slurm_submission(): what a `dgq slurm` run submits. Only shards not yet complete are
// submitted, so running the same command again finishes a submission without redoing work.
#include <filesystem>

#include "dgq/errors.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "dgq/sim/sweep/slurm_submission.hpp"
#include "slurm/joined.hpp"

namespace dgq::sim {

namespace {

namespace fs = std::filesystem;

// Refuses to submit while jobs of the same submission are queued or running: two arrays
// writing the same shard files would race.
void check_not_in_flight(const std::string& squeue, const std::vector<std::string>& scripts) {
  const std::vector<std::string> ids = slurm_jobs_in_flight(squeue, scripts);
  if (ids.empty()) return;
  const std::string list = joined(ids, ", ");
  throw Error("job(s) " + list + " of this submission (" + scripts.front().substr(0, scripts.front().rfind('/')) +
              ") are still queued or running; wait for them (squeue -j " + ids.front() +
              ") or scancel them, then submit again");
}

}  // namespace

SlurmSubmission prepare_slurm_submission(const SweepConfig& config, const SlurmOptions& o, bool dry_run) {
  check_slurm_inputs(config);
  SlurmSubmission s;
  s.shards = slurm_shard_states(config, o);
  for (const auto& shard : s.shards) {
    if (!shard.complete()) s.pending.push_back(shard.index);
  }
  s.array_script = slurm_array_script_path(o);
  s.merge_script = slurm_merge_script_path(o);
  if (!dry_run) check_not_in_flight(o.squeue, {s.array_script, s.merge_script});
  fs::create_directories(o.dir + "/shards");
  fs::create_directories(o.dir + "/logs");
  fs::create_directories(fs::path(o.output).parent_path());
  if (!s.pending.empty()) write_text_file(s.array_script, slurm_array_script(o, s.pending), true);
  write_text_file(s.merge_script, slurm_merge_script(o), true);
  return s;
}

}  // namespace dgq::sim

#pragma once
// The kinds of work a Slurm array can run (dgq/sim/sweep/slurm.hpp, SlurmJobKind): for each, the
// dgq subcommand a task runs on its shard. Internal to the script generator.
#include <string>

#include "dgq/sim/sweep/slurm.hpp"

namespace dgq::sim {

struct SlurmJobKindInfo {
  SlurmJobKind kind;
  const char* name;  // file and job names: "<name>.sbatch", logs/<name>-%A_%a.out
  // The shell command of one task, which may use "$shard" (the task's index), "$shard_file"
  // (its results file) and "$OMP_NUM_THREADS"; arguments from SlurmOptions come quoted.
  std::string (*task_command)(const SlurmOptions& o);
};

const SlurmJobKindInfo& slurm_job_kind(SlurmJobKind kind);

}  // namespace dgq::sim

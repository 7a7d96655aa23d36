// One entry per kind of array work. Eval sweeps need none of their own: a config with [eval]
// is a sweep whose runs are `dgq eval` runs (docs/eval.md), sharded and merged the same way.
// A new kind is one SlurmJobKind value plus one row here; scripts, shard files, resubmission
// and the merge check are shared by all kinds.
#include "slurm/job_kinds.hpp"

#include "dgq/errors.hpp"

namespace dgq::sim {

namespace {

std::string sweep_task(const SlurmOptions& o) {
  return shell_quote(o.dgq) + " sweep " + shell_quote(o.config) + " -o \"$shard_file\" --shard \"$shard/" +
         std::to_string(o.tasks) + "\" --threads \"$OMP_NUM_THREADS\" --device " + shell_quote(o.device) +
         " --progress";
}

constexpr SlurmJobKindInfo kJobKinds[] = {
    {SlurmJobKind::sweep, "sweep", sweep_task},
};

}  // namespace

const SlurmJobKindInfo& slurm_job_kind(SlurmJobKind kind) {
  for (const SlurmJobKindInfo& k : kJobKinds) {
    if (k.kind == kind) return k;
  }
  throw ParameterError("slurm: unknown job kind " + std::to_string(static_cast<int>(kind)));
}

}  // namespace dgq::sim

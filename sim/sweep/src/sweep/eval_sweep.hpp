#pragma once
// Eval sweeps ([eval] in a sweep config, docs/eval.md "Eval sweeps"): the shard's pending runs
// as `dgq eval` runs, written as run groups of a results file so that resume, shards,
// `dgq merge` and `dgq slurm` work as for replay sweeps.
#include <vector>

#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/sweep.hpp"

namespace dgq::sim {
// The options of the `dgq eval` run of one input (paths, ctx, chunks, base, query rounding).
EvalOptions eval_options_for(const SweepEval& eval, const SweepEvalInput& in);

SweepReport run_eval_sweep(const SweepConfig& config, const SweepOptions& options, const std::vector<SweepRun>& mine,
                           const RunListing& done, SweepReport report);
}  // namespace dgq::sim

#pragma once
// The results file of `dgq eval` (format dgq-eval, docs/eval.md): the run's settings and
// provenance on its root, one group per cache with its summary and every scored token.
#include <string>
#include <vector>

#include "dgq/sim/eval/eval.hpp"
#include "perplexity/eval_plan.hpp"
#include "results/eval_chunk_file.hpp"

namespace dgq::sim {

// Written to OUTPUT.partial and renamed when whole; totals[i] holds run i's scores over every
// chunk (its logits are stored only with options.save_logits).
void write_eval_results_file(const EvalOptions& options, const EvalPlan& plan, const EvalResult& result,
                             const std::vector<ChunkRun>& totals);

}  // namespace dgq::sim

#pragma once
// The attributes and per-layer dataset of one scheme's eval summary, written the same way into
// a `dgq eval` results file (/runs/<i>) and into an eval sweep's run groups (docs/eval.md).
#include <hdf5.h>

#include "dgq/sim/eval/scores.hpp"

namespace dgq::sim {
void write_summary_attributes(hid_t group, const EvalSummary& summary);
}  // namespace dgq::sim

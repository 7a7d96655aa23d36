#pragma once
// The resume check of a sweep: complete runs that would be skipped must have been written by
// this dgq build from the same configuration (docs/results-format.md, "Provenance").
#include <vector>

#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/sweep.hpp"

namespace dgq::sim {
// Throws InputError (require_provenance's line) for the first run of `mine` that is complete in
// `done` with another dgq version or config hash, unless options.allow_mixed_versions.
void check_resumed_runs(const SweepConfig& config, const std::vector<SweepRun>& mine, const RunListing& done,
                        const SweepOptions& options);
}  // namespace dgq::sim

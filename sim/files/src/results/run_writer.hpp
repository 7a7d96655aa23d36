#pragma once
#include <hdf5.h>

#include "dgq/sim/files/results/run_result.hpp"

namespace dgq::sim {
// Writes /runs/<run.name> into an open results file; the `complete` attribute comes last.
void write_run(hid_t file, const RunResult& run, const std::string& context);
}  // namespace dgq::sim

#pragma once
#include <hdf5.h>

#include "dgq/sim/replay.hpp"

namespace dgq::sim {
// Writes /runs/<run.name> into an open results file; the `complete` attribute comes last.
void write_run(hid_t file, const RunResult& run, const std::string& context);
}  // namespace dgq::sim

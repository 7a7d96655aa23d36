#pragma once
#include <hdf5.h>

#include "dgq/sim/replay.hpp"

namespace dgq::sim {
// The dgq version recorded in every run (the CMake project version).
inline constexpr const char* kDgqVersion = "0.1.0";

// Writes /runs/<run.name> into an open results file; the `complete` attribute comes last.
void write_run(hid_t file, const RunResult& run, const std::string& context);
}  // namespace dgq::sim

#pragma once
// The differential check written once: encode every unit with the CPU reference and with the
// CUDA batch, compare every stored byte (codes, lo/hi bits, boundaries, bitmap, in-band markers,
// segment counts), decode both ways and compare the output bits, and check the inputs were
// not modified. Comparison mode: exact bytes (kExactBytes), never a tolerance.
#include <string>
#include <vector>

#include "dgq/dgq.hpp"
#include "gpu_inputs.hpp"

namespace dgq::gpu_test {

inline constexpr const char* kExactBytes = "exact bytes";

// Empty when reference and CUDA agree on every byte; otherwise the first difference, naming
// unit, token, channel and both values, and the reproducer file written under the build dir.
std::string differential_mismatch(const std::string& case_name, const std::vector<HostUnit>& units,
                                  const DgqV1Params& p);

// First difference between two encodings (empty if identical).
std::string first_difference(const DgqV1Encoded& ref, const DgqV1Encoded& gpu);

// Writes inputs, parameters and the difference to <build>/gpu-mismatch-<case>.bin/.txt; returns the .txt path.
std::string write_reproducer(const std::string& case_name, const std::vector<HostUnit>& units, const DgqV1Params& p,
                             const std::string& difference);

}  // namespace dgq::gpu_test

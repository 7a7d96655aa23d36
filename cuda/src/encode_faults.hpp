#pragma once
// The first fault an encode found on the device, decoded from the status words
// (kernels/kernels.hpp) and completed from device memory (the offending value, the segment's
// token range and its lo/hi), so that host callers can name it in the reference's words.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"

namespace dgq::cuda {

struct EncodeFault {
  enum Kind { none, non_finite, variance_overflow, range_overflow } kind = none;
  std::int64_t unit = -1, token = -1, channel = -1;
  float value = 0.0f;                              // non_finite: the element as fp32
  int segment = -1;                                // range_overflow
  std::int64_t first_token = -1, last_token = -1;  // range_overflow: the segment's tokens
  float lo = 0.0f, hi = 0.0f;                      // range_overflow: the range that overflowed
};

// Synchronises `stream` (kernel errors surface here as dgq::Error) and reads the fault of the
// lowest faulty unit: within a unit a token fault comes first, as in the reference, which
// computes ranges only after every token passed.
EncodeFault read_encode_fault(const DeviceEncoded& enc, cudaStream_t stream);
// The reference's message (reference/src/schemes/dgq_v1/scan.cpp, token_stats.cpp, ranges.cpp) with
// dgq_encode_batch's "unit <label>: " prefix.
std::string describe(const EncodeFault& f, std::int64_t unit_label);

}  // namespace dgq::cuda

#pragma once
// The first fault an encode found on the device, decoded from the status words
// (kernels/kernels.hpp), so that host callers can name the unit in their own terms.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"

namespace dgq::cuda {

struct EncodeFault {
  enum Kind { none, non_finite, variance_overflow, range_overflow } kind = none;
  std::int64_t unit = -1, token = -1, channel = -1;
  int segment = -1;
};

// Synchronises `stream` (kernel errors surface here as dgq::Error) and reads the fault words.
EncodeFault read_encode_fault(const DeviceEncoded& enc, cudaStream_t stream);
// "unit <label>: non-finite value (NaN or Inf) at token t, channel d", ...
std::string describe(const EncodeFault& f, std::int64_t unit_label);

}  // namespace dgq::cuda

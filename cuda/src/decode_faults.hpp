#pragma once
// The first unit whose stored markers disagree with its segment count, read back after a
// decode, so that host callers can name the unit in their own terms.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"

namespace dgq::cuda {

// Synchronises `stream`; -1 when every unit decoded cleanly.
std::int64_t read_decode_fault(const DeviceEncoded& enc, cudaStream_t stream);
std::string describe_decode_fault(std::int64_t unit_label);

}  // namespace dgq::cuda

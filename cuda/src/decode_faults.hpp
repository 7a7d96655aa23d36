#pragma once
// The first unit whose stored markers disagree with its segment count, read back after a
// decode, so that host callers can name the unit in their own terms.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"

namespace dgq::cuda {

struct DecodeFault {
  std::int64_t unit = -1;  // -1: every unit decoded cleanly
  std::int64_t marker_segments = 0, header_segments = 0;
};

// Synchronises `stream` and reads the lowest faulty unit with both segment counts.
DecodeFault read_decode_fault(const DeviceEncoded& enc, cudaStream_t stream);
// "unit <label>: corrupt DGQ data: the stored markers give N segments, the header says M"
// (dgq_segment_edges' words).
std::string describe(const DecodeFault& f, std::int64_t unit_label);

}  // namespace dgq::cuda

// Rule 8, bitmap mode: bit t%8 of byte t/8 is segment(t) mod 2; bits past the last token are 0.
// One thread per (unit, byte); 1/8 byte written per token.
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

__global__ void bitmap_kernel(std::int64_t units, std::int64_t tokens, const std::uint32_t* __restrict__ edges,
                              const int* __restrict__ segments, std::uint8_t* __restrict__ bitmap) {
  const std::int64_t bytes_per_unit = (tokens + 7) / 8;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= units * bytes_per_unit) return;
  const std::int64_t unit = i / bytes_per_unit;
  const std::int64_t first = (i % bytes_per_unit) * 8;
  const std::uint32_t* unit_edges = edges + unit * (kMaxSegments + 1);
  const int count = segments[unit];
  int s = segment_of(unit_edges, count, first, 0);
  unsigned byte = 0;
  for (int bit = 0; bit < 8 && first + bit < tokens; ++bit) {
    s = segment_of(unit_edges, count, first + bit, s);
    byte |= static_cast<unsigned>(s & 1) << bit;
  }
  bitmap[i] = static_cast<std::uint8_t>(byte);
}

}  // namespace

void launch_bitmap(const DeviceShape& shape, const std::uint32_t* edges, const int* segments, std::uint8_t* bitmap,
                   cudaStream_t stream) {
  const std::int64_t items = shape.units * ((shape.tokens + 7) / 8);
  if (items == 0) return;
  bitmap_kernel<<<grid_for(items, 256), 256, 0, stream>>>(shape.units, shape.tokens, edges, segments, bitmap);
  check_launch("bitmap_kernel");
}

}  // namespace dgq::cuda::detail

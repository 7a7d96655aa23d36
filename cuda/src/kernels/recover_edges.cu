// The decoder's side of rule 8: segment edges from the stored parts only.
// table: the stored boundaries are the edges. bitmap: an edge wherever the parity bit changes.
// inband: an edge wherever channel 0 holds a marker code (127 or -128). A thread per token
// appends its edge with an atomic counter (at most kMaxSegments - 1 per unit are kept); a
// thread per unit then sorts them (the append order is not deterministic, the sorted set is)
// and checks the count against the stored segment count.
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxInterior = kMaxSegments - 1;

__device__ bool bitmap_bit(const std::uint8_t* bitmap, std::int64_t t) { return (bitmap[t / 8] >> (t % 8)) & 1u; }

__global__ void find_marked_edges_kernel(Markers markers, std::int64_t units, std::int64_t tokens, int channels,
                                         const std::int8_t* __restrict__ codes, const std::uint8_t* __restrict__ bitmap,
                                         std::uint32_t* edges, int* counts) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= units * tokens) return;
  const std::int64_t unit = i / tokens;
  const std::int64_t t = i % tokens;
  if (t == 0) return;
  bool edge;
  if (markers == Markers::bitmap) {
    const std::uint8_t* unit_bitmap = bitmap + unit * ((tokens + 7) / 8);
    edge = bitmap_bit(unit_bitmap, t) != bitmap_bit(unit_bitmap, t - 1);
  } else {
    edge = rules::is_inband_marker(codes[i * channels]);
  }
  if (!edge) return;
  const int slot = atomicAdd(&counts[unit], 1);
  if (slot < kMaxInterior) edges[unit * (kMaxSegments + 1) + 1 + slot] = static_cast<std::uint32_t>(t);
}

__global__ void finish_edges_kernel(Markers markers, std::int64_t units, std::int64_t tokens,
                                    const std::uint32_t* __restrict__ stored_edges, const int* __restrict__ segments,
                                    std::uint32_t* edges, const int* __restrict__ counts, unsigned long long* error) {
  const std::int64_t unit = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (unit >= units) return;
  std::uint32_t* e = edges + unit * (kMaxSegments + 1);
  const int expected = segments[unit];
  if (markers == Markers::table) {
    for (int s = 0; s <= expected; ++s) e[s] = stored_edges[unit * (kMaxSegments + 1) + s];
    return;
  }
  const int found = counts[unit];
  if (found != expected - 1) {
    atomicMin(error, static_cast<unsigned long long>(unit));
    return;
  }
  for (int i = 2; i <= found; ++i) {  // insertion sort of e[1..found]
    const std::uint32_t v = e[i];
    int j = i;
    for (; j > 1 && e[j - 1] > v; --j) e[j] = e[j - 1];
    e[j] = v;
  }
  e[0] = 0;
  e[found + 1] = static_cast<std::uint32_t>(tokens);
}

}  // namespace

void launch_recover_edges(Markers markers, const DeviceShape& shape, const std::int8_t* codes,
                          const std::uint8_t* bitmap, const std::uint32_t* stored_edges, const int* segments,
                          std::uint32_t* edges, int* counts, unsigned long long* error, cudaStream_t stream) {
  if (shape.units == 0 || shape.tokens == 0) return;
  check_cuda(cudaMemsetAsync(counts, 0, static_cast<std::size_t>(shape.units) * sizeof(int), stream),
             "cudaMemsetAsync(edge counts)");
  if (markers != Markers::table) {
    find_marked_edges_kernel<<<grid_for(shape.units * shape.tokens, kThreads), kThreads, 0, stream>>>(
        markers, shape.units, shape.tokens, static_cast<int>(shape.channels), codes, bitmap, edges, counts);
    check_launch("find_marked_edges_kernel");
  }
  finish_edges_kernel<<<grid_for(shape.units, kThreads), kThreads, 0, stream>>>(
      markers, shape.units, shape.tokens, stored_edges, segments, edges, counts, error);
  check_launch("finish_edges_kernel");
}

}  // namespace dgq::cuda::detail

// Rule 6 with granularity=segment-channel: lo[d], hi[d] per segment. Needs the segment edges,
// so it is a second pass over the tensor (docs/cuda.md). A thread block takes a chunk of
// tokens of one unit, a thread one channel (coalesced rows); each thread folds its chunk per
// segment and merges into the segment's range with integer atomics on order-preserving keys
// (min/max are exact in any order). A finalize pass turns keys back into floats, applies
// canonical_zero and computes inv.
#include <cuda_runtime_api.h>

#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kChunkTokens = 64;
constexpr int kThreads = static_cast<int>(kMaxChannels);

template <DType T>
__global__ void channel_ranges_kernel(const typename Storage<T>::type* __restrict__ x, std::int64_t tokens,
                                      int channels, const std::uint32_t* __restrict__ edges,
                                      const int* __restrict__ segments, std::uint32_t* lo_keys,
                                      std::uint32_t* hi_keys) {
  const int d = threadIdx.x;
  const std::int64_t unit = blockIdx.y;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kChunkTokens;
  if (d >= channels || first >= tokens) return;
  const std::int64_t end = first + kChunkTokens < tokens ? first + kChunkTokens : tokens;
  const std::uint32_t* unit_edges = edges + unit * (kMaxSegments + 1);
  const int count = segments[unit];
  const auto* base = x + unit * tokens * channels;

  int s = segment_of(unit_edges, count, first, 0);
  float low = INFINITY, high = -INFINITY;
  auto flush = [&](int segment) {
    const std::int64_t slot = (unit * kMaxSegments + segment) * channels + d;
    atomicMin(&lo_keys[slot], float_key(low));
    atomicMax(&hi_keys[slot], float_key(high));
    low = INFINITY;
    high = -INFINITY;
  };
  for (std::int64_t t = first; t < end; ++t) {
    if (s + 1 < count && t >= static_cast<std::int64_t>(unit_edges[s + 1])) {
      flush(s);
      ++s;
    }
    const float v = Storage<T>::load(base[t * channels + d]);
    low = fminf(low, v);
    high = fmaxf(high, v);
  }
  flush(s);
}

__global__ void finalize_ranges_kernel(std::int64_t units, int channels, const int* __restrict__ segments, float* lo,
                                       float* hi, float* inv, unsigned long long* status) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= units * kMaxSegments * channels) return;
  const std::int64_t unit = i / (kMaxSegments * channels);
  const int segment = static_cast<int>((i / channels) % kMaxSegments);
  if (segment >= segments[unit]) return;
  const float low = rules::canonical_zero(key_float(__float_as_uint(lo[i])));
  const float high = rules::canonical_zero(key_float(__float_as_uint(hi[i])));
  lo[i] = low;
  hi[i] = high;
  inv[i] = rules::code_inverse_step(low, high);
  if (!isfinite(high - low)) atomicMin(&status[kStatusRangeOverflow], static_cast<unsigned long long>(i));
}

template <DType T>
void launch_typed(const void* x, const DeviceShape& shape, const std::uint32_t* edges, const int* segments, float* lo,
                  float* hi, cudaStream_t stream) {
  const dim3 grid(grid_for(shape.tokens, kChunkTokens), static_cast<unsigned>(shape.units));
  channel_ranges_kernel<T><<<grid, kThreads, 0, stream>>>(
      static_cast<const typename Storage<T>::type*>(x), shape.tokens, static_cast<int>(shape.channels), edges, segments,
      reinterpret_cast<std::uint32_t*>(lo), reinterpret_cast<std::uint32_t*>(hi));
  check_launch("channel_ranges_kernel");
}

}  // namespace

void launch_channel_ranges(const void* x, const DeviceShape& shape, const std::uint32_t* edges, const int* segments,
                           float* lo, float* hi, float* inv, unsigned long long* status, cudaStream_t stream) {
  if (shape.elements() == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(shape.units * kMaxSegments * shape.channels) * sizeof(float);
  check_cuda(cudaMemsetAsync(lo, 0xff, bytes, stream), "cudaMemsetAsync(lo keys)");  // min identity
  check_cuda(cudaMemsetAsync(hi, 0x00, bytes, stream), "cudaMemsetAsync(hi keys)");  // max identity
  switch (shape.dtype) {
    case DType::f16: launch_typed<DType::f16>(x, shape, edges, segments, lo, hi, stream); break;
    case DType::bf16: launch_typed<DType::bf16>(x, shape, edges, segments, lo, hi, stream); break;
    case DType::f32: launch_typed<DType::f32>(x, shape, edges, segments, lo, hi, stream); break;
  }
  const std::int64_t slots = shape.units * kMaxSegments * shape.channels;
  finalize_ranges_kernel<<<grid_for(slots, 256), 256, 0, stream>>>(shape.units, static_cast<int>(shape.channels),
                                                                   segments, lo, hi, inv, status);
  check_launch("finalize_ranges_kernel");
}

}  // namespace dgq::cuda::detail

// Rules 3-6 per unit on the GPU: one thread block per unit.
// Selection (rule 5) accepts the n_max - 1 candidates with the smallest (r_b, b). Block means
// are >= +0, so r_b >= +0 and its bit pattern orders like its value: the key
// (bits(r_b) << 32) | b orders candidates exactly as the spec does, and the k-th accepted
// candidate is the smallest key above the (k-1)-th. Each round is one block-wide min.
// With granularity=segment the same block then reduces the block min/max of each segment
// into its range (rule 6) and the quantizer's inverse step (rule 7).
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarp;

struct SelectArgs {
  std::int64_t tokens, blocks;
  int win, budget;
  float group_ratio;
  bool segment_ranges;
};

// Block-wide min of a 64-bit key; every thread gets the result.
__device__ unsigned long long block_min_u64(unsigned long long v, unsigned long long* scratch) {
  v = warp_min_u64(v);
  if (threadIdx.x % kWarp == 0) scratch[threadIdx.x / kWarp] = v;
  __syncthreads();
  unsigned long long best = scratch[0];
  for (int w = 1; w < kWarps; ++w) best = scratch[w] < best ? scratch[w] : best;
  __syncthreads();
  return best;
}

__device__ float block_reduce(float v, bool take_min, float* scratch) {
  v = take_min ? warp_min(v) : warp_max(v);
  if (threadIdx.x % kWarp == 0) scratch[threadIdx.x / kWarp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kWarps; ++w) r = take_min ? fminf(r, scratch[w]) : fmaxf(r, scratch[w]);
  __syncthreads();
  return r;
}

__device__ int select_edges(const float* mean, const SelectArgs& a, std::uint32_t* edges, unsigned long long* scratch) {
  __shared__ std::uint32_t accepted[kMaxSegments];
  int count = 0;
  unsigned long long previous = 0;  // keys are >= 1 since b >= 1
  for (; count < a.budget - 1; ++count) {
    unsigned long long local = kNoIndex;
    for (std::int64_t b = 1 + threadIdx.x; b < a.blocks; b += kThreads) {
      const float r = rules::block_ratio(mean[b - 1], mean[b]);
      if (!(r < a.group_ratio)) continue;
      const unsigned long long key =
          (static_cast<unsigned long long>(__float_as_uint(r)) << 32) | static_cast<unsigned long long>(b);
      if (key > previous && key < local) local = key;
    }
    const unsigned long long best = block_min_u64(local, scratch);
    if (best == kNoIndex) break;
    if (threadIdx.x == 0) accepted[count] = static_cast<std::uint32_t>(best & 0xffffffffull);
    previous = best;
  }
  if (threadIdx.x == 0) {
    for (int i = 1; i < count; ++i) {  // insertion sort of at most 7 block indices
      const std::uint32_t b = accepted[i];
      int j = i;
      for (; j > 0 && accepted[j - 1] > b; --j) accepted[j] = accepted[j - 1];
      accepted[j] = b;
    }
    edges[0] = 0;
    for (int i = 0; i < count; ++i) edges[i + 1] = accepted[i] * static_cast<std::uint32_t>(a.win);
    edges[count + 1] = static_cast<std::uint32_t>(a.tokens);
  }
  __syncthreads();
  return count + 1;
}

__global__ void select_segments_kernel(const float* __restrict__ bmean, const float* __restrict__ bmin,
                                       const float* __restrict__ bmax, SelectArgs a, std::uint32_t* edges,
                                       int* segments, float* lo, float* hi, float* inv, unsigned long long* status) {
  __shared__ unsigned long long key_scratch[kWarps];
  __shared__ float value_scratch[kWarps];
  const std::int64_t unit = blockIdx.x;
  std::uint32_t* unit_edges = edges + unit * (kMaxSegments + 1);
  const int count = select_edges(bmean + unit * a.blocks, a, unit_edges, key_scratch);
  if (threadIdx.x == 0) segments[unit] = count;
  if (!a.segment_ranges) return;
  for (int s = 0; s < count; ++s) {
    const std::int64_t first_block = unit_edges[s] / a.win;
    const std::int64_t end_block = (static_cast<std::int64_t>(unit_edges[s + 1]) + a.win - 1) / a.win;
    float low = INFINITY, high = -INFINITY;
    for (std::int64_t b = first_block + threadIdx.x; b < end_block; b += kThreads) {
      low = fminf(low, bmin[unit * a.blocks + b]);
      high = fmaxf(high, bmax[unit * a.blocks + b]);
    }
    low = rules::canonical_zero(block_reduce(low, true, value_scratch));
    high = rules::canonical_zero(block_reduce(high, false, value_scratch));
    if (threadIdx.x == 0) {
      const std::int64_t slot = unit * kMaxSegments + s;
      lo[slot] = low;
      hi[slot] = high;
      inv[slot] = rules::code_inverse_step(low, high);
      if (!isfinite(high - low)) atomicMin(&status[kStatusRangeOverflow], static_cast<unsigned long long>(slot));
    }
  }
}

}  // namespace

void launch_select_segments(const float* bmean, const float* bmin, const float* bmax, const DeviceShape& shape,
                            const DgqV1Params& p, std::uint32_t* edges, int* segments, float* lo, float* hi, float* inv,
                            unsigned long long* status, cudaStream_t stream) {
  if (shape.units == 0 || shape.tokens == 0) return;
  SelectArgs a{};
  a.tokens = shape.tokens;
  a.win = p.win;
  a.blocks = (shape.tokens + p.win - 1) / p.win;
  a.budget = rules::segment_budget(shape.tokens, p.max_groups, p.win);
  a.group_ratio = p.group_ratio;
  a.segment_ranges = p.granularity == Granularity::segment;
  select_segments_kernel<<<static_cast<unsigned>(shape.units), kThreads, 0, stream>>>(bmean, bmin, bmax, a, edges,
                                                                                      segments, lo, hi, inv, status);
  check_launch("select_segments_kernel");
}

}  // namespace dgq::cuda::detail

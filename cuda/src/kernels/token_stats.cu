// Rule 1 on the GPU: one warp per token. Lane j holds channels j, j+32, ... (D <= 256, so at
// most 8 values in registers) and accumulates them in increasing d: that is accumulator j of
// the canonical sum. The __shfl_down_sync tree with offsets 16, 8, 4, 2, 1 then performs
// acc[j] += acc[j+s] for j < s, leaving the canonical sum in lane 0. The same registers give
// the second (centred) sum, the token's min/max and the NaN/Inf check: one read of the tensor.
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kTokensPerBlock = 8;
static_assert(rules::kCanonicalLanes == kWarp, "one lane per canonical accumulator");
constexpr int kValuesPerLane = static_cast<int>(kMaxChannels) / kWarp;

// The canonical tree of rule 1 over the 32 lane accumulators; the result is valid in lane 0.
__device__ __forceinline__ float canonical_tree(float acc) {
  // Offsets 16, 8, 4, 2, 1 = rules::kCanonicalTree (a host array, not visible in device code).
#pragma unroll
  for (int s = rules::kCanonicalLanes / 2; s > 0; s /= 2) {
    acc = rules::sum_step(acc, __shfl_down_sync(kFullMask, acc, s));
  }
  return acc;
}

template <DType T>
__global__ void token_stats_kernel(const typename Storage<T>::type* __restrict__ x, std::int64_t tokens_total,
                                   int channels, float min_var, float* __restrict__ var, float* __restrict__ tmin,
                                   float* __restrict__ tmax, unsigned long long* __restrict__ status) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t token = static_cast<std::int64_t>(blockIdx.x) * kTokensPerBlock + threadIdx.x / kWarp;
  if (token >= tokens_total) return;  // the whole warp leaves together
  const auto* row = x + token * channels;

  float v[kValuesPerLane];
#pragma unroll
  for (int k = 0; k < kValuesPerLane; ++k) {
    const int d = lane + kWarp * k;
    v[k] = d < channels ? Storage<T>::load(row[d]) : 0.0f;
  }

  float sum = 0.0f;  // accumulators start at +0.0f (spec rule 1)
#pragma unroll
  for (int k = 0; k < kValuesPerLane; ++k) {
    if (lane + kWarp * k < channels) sum = rules::sum_step(sum, v[k]);
  }
  const float mean = __shfl_sync(kFullMask, canonical_tree(sum), 0) / static_cast<float>(channels);

  float squares = 0.0f;
  float lo = INFINITY, hi = -INFINITY;
  unsigned long long first_bad = kNoIndex;
#pragma unroll
  for (int k = kValuesPerLane - 1; k >= 0; --k) {  // descending so the smallest bad d wins
    const int d = lane + kWarp * k;
    if (d < channels) {
      lo = fminf(lo, v[k]);
      hi = fmaxf(hi, v[k]);
      if (!isfinite(v[k])) first_bad = static_cast<unsigned long long>(token * channels + d);
    }
  }
#pragma unroll
  for (int k = 0; k < kValuesPerLane; ++k) {
    if (lane + kWarp * k < channels) squares = rules::square_step(squares, v[k] - mean);
  }
  const float variance = __shfl_sync(kFullMask, canonical_tree(squares), 0) / static_cast<float>(channels);
  lo = warp_min_of_finite(lo);
  hi = warp_max_of_finite(hi);
  // NaN/Inf are rare: the 64-bit minimum (ten shuffles) only runs in a warp that saw one.
  if (__ballot_sync(kFullMask, first_bad != kNoIndex) != 0) first_bad = warp_min_u64(first_bad);
  if (lane == 0) {
    var[token] = fmaxf(variance, min_var);
    tmin[token] = lo;
    tmax[token] = hi;
    // A row with a NaN/Inf is rejected for that; only a finite row can overflow its variance
    // (|x| near FLT_MAX), which the reference rejects as well (rule 1).
    unsigned long long fault = kNoIndex;
    if (first_bad != kNoIndex) {
      fault = first_bad * 2 + kFaultNonFinite;
    } else if (!isfinite(variance)) {
      fault = static_cast<unsigned long long>(token * channels) * 2 + kFaultVarianceOverflow;
    }
    if (fault != kNoIndex) atomicMin(&status[kStatusTokenFault], fault);
  }
}

template <DType T>
void launch_typed(const void* x, std::int64_t tokens_total, int channels, float min_var, float* var, float* tmin,
                  float* tmax, unsigned long long* status, cudaStream_t stream) {
  token_stats_kernel<T><<<grid_for(tokens_total, kTokensPerBlock), kTokensPerBlock * kWarp, 0, stream>>>(
      static_cast<const typename Storage<T>::type*>(x), tokens_total, channels, min_var, var, tmin, tmax, status);
  check_launch("token_stats_kernel");
}

}  // namespace

void launch_token_stats(const void* x, const DeviceShape& shape, float min_var, float* var, float* tmin, float* tmax,
                        unsigned long long* status, cudaStream_t stream) {
  const std::int64_t tokens_total = shape.units * shape.tokens;
  if (tokens_total == 0) return;
  const int channels = static_cast<int>(shape.channels);
  switch (shape.dtype) {
    case DType::f16:
      return launch_typed<DType::f16>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
    case DType::bf16:
      return launch_typed<DType::bf16>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
    case DType::f32:
      return launch_typed<DType::f32>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
  }
}

}  // namespace dgq::cuda::detail

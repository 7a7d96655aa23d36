// Rule 1 on the GPU: one warp per token (several tokens per warp, each as if alone). Lane j holds channels j, j+32, ... (D <= 256, so at
// most 8 values in registers) and accumulates them in increasing d: that is accumulator j of
// the canonical sum. The __shfl_down_sync tree with offsets 16, 8, 4, 2, 1 then performs
// acc[j] += acc[j+s] for j < s, leaving the canonical sum in lane 0. The same registers give
// the second (centred) sum, the token's min/max and the NaN/Inf check: one read of the tensor.
#include "device_common.cuh"
#include "kernels.hpp"
#include "../cuda_check.hpp"

namespace dgq::cuda::detail {
namespace {

// Each warp takes kTokensPerWarp tokens at once: their loads, trees and divisions are
// independent, so they overlap (one token per warp left the SMs waiting on each token's chain of
// load, shuffles and division; Nsight Compute on the H200, docs/gpu-results.md). Every token's
// arithmetic is the one-token kernel's, step for step.
constexpr int kTokensPerWarp = 4;
constexpr int kWarpsPerBlock = 8;
constexpr int kTokensPerBlock = kTokensPerWarp * kWarpsPerBlock;
static_assert(rules::kCanonicalLanes == kWarp, "one lane per canonical accumulator");
constexpr int kValuesPerLane = static_cast<int>(kMaxChannels) / kWarp;

// The canonical tree of rule 1 over the 32 lane accumulators of each token, the tokens' steps
// interleaved; the results are valid in lane 0.
__device__ __forceinline__ void canonical_trees(float (&acc)[kTokensPerWarp]) {
  // Offsets 16, 8, 4, 2, 1 = rules::kCanonicalTree (a host array, not visible in device code).
#pragma unroll
  for (int s = rules::kCanonicalLanes / 2; s > 0; s /= 2) {
#pragma unroll
    for (int j = 0; j < kTokensPerWarp; ++j) acc[j] = rules::sum_step(acc[j], __shfl_down_sync(kFullMask, acc[j], s));
  }
}

template <DType T>
__global__ void token_stats_kernel(const typename Storage<T>::type* __restrict__ x, std::int64_t tokens_total,
                                   int channels, float min_var, float* __restrict__ var, float* __restrict__ tmin,
                                   float* __restrict__ tmax, unsigned long long* __restrict__ status) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t first_token =
      (static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp) * kTokensPerWarp;
  if (first_token >= tokens_total) return;  // the whole warp leaves together
  // Tokens past the end are computed on token first_token's row (in bounds) and not stored.
  std::int64_t token[kTokensPerWarp];
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) token[j] = first_token + j < tokens_total ? first_token + j : first_token;

  float v[kTokensPerWarp][kValuesPerLane];
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    const auto* row = x + token[j] * channels;
#pragma unroll
    for (int k = 0; k < kValuesPerLane; ++k) {
      const int d = lane + kWarp * k;
      v[j][k] = d < channels ? Storage<T>::load(row[d]) : 0.0f;
    }
  }

  float acc[kTokensPerWarp];
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    acc[j] = 0.0f;  // accumulators start at +0.0f (spec rule 1)
#pragma unroll
    for (int k = 0; k < kValuesPerLane; ++k) {
      if (lane + kWarp * k < channels) acc[j] = rules::sum_step(acc[j], v[j][k]);
    }
  }
  canonical_trees(acc);
  float mean[kTokensPerWarp];
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) mean[j] = __shfl_sync(kFullMask, acc[j], 0) / static_cast<float>(channels);

  float lo[kTokensPerWarp], hi[kTokensPerWarp];
  unsigned long long first_bad[kTokensPerWarp];
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    first_bad[j] = kNoIndex;
    lo[j] = INFINITY;
    hi[j] = -INFINITY;
#pragma unroll
    for (int k = kValuesPerLane - 1; k >= 0; --k) {  // descending so the smallest bad d wins
      const int d = lane + kWarp * k;
      if (d < channels) {
        lo[j] = fminf(lo[j], v[j][k]);
        hi[j] = fmaxf(hi[j], v[j][k]);
        if (!isfinite(v[j][k])) first_bad[j] = static_cast<unsigned long long>(token[j] * channels + d);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    acc[j] = 0.0f;
#pragma unroll
    for (int k = 0; k < kValuesPerLane; ++k) {
      if (lane + kWarp * k < channels) acc[j] = rules::square_step(acc[j], v[j][k] - mean[j]);
    }
  }
  canonical_trees(acc);
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    lo[j] = warp_min_of_finite(lo[j]);
    hi[j] = warp_max_of_finite(hi[j]);
  }
  // NaN/Inf are rare: the 64-bit minima (ten shuffles each) only run in a warp that saw one.
  bool any_bad = false;
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) any_bad = any_bad || first_bad[j] != kNoIndex;
  if (__ballot_sync(kFullMask, any_bad) != 0) {
#pragma unroll
    for (int j = 0; j < kTokensPerWarp; ++j) first_bad[j] = warp_min_u64(first_bad[j]);
  }
  if (lane != 0) return;
  unsigned long long fault = kNoIndex;  // the lowest of the tokens' keys, as atomicMin across warps
#pragma unroll
  for (int j = 0; j < kTokensPerWarp; ++j) {
    if (first_token + j >= tokens_total) break;
    const float variance = acc[j] / static_cast<float>(channels);
    var[token[j]] = fmaxf(variance, min_var);
    tmin[token[j]] = lo[j];
    tmax[token[j]] = hi[j];
    // A row with a NaN/Inf is rejected for that; only a finite row can overflow its variance
    // (|x| near FLT_MAX), which the reference rejects as well (rule 1).
    unsigned long long key = kNoIndex;
    if (first_bad[j] != kNoIndex) {
      key = first_bad[j] * 2 + kFaultNonFinite;
    } else if (!isfinite(variance)) {
      key = static_cast<unsigned long long>(token[j] * channels) * 2 + kFaultVarianceOverflow;
    }
    fault = key < fault ? key : fault;
  }
  if (fault != kNoIndex) atomicMin(&status[kStatusTokenFault], fault);
}

template <DType T>
void launch_typed(const void* x, std::int64_t tokens_total, int channels, float min_var, float* var, float* tmin,
                  float* tmax, unsigned long long* status, cudaStream_t stream) {
  token_stats_kernel<T><<<grid_for(tokens_total, kTokensPerBlock), kWarpsPerBlock * kWarp, 0, stream>>>(
      static_cast<const typename Storage<T>::type*>(x), tokens_total, channels, min_var, var, tmin, tmax, status);
  check_launch("token_stats_kernel");
}

}  // namespace

void launch_token_stats(const void* x, const DeviceShape& shape, float min_var, float* var, float* tmin,
                        float* tmax, unsigned long long* status, cudaStream_t stream) {
  const std::int64_t tokens_total = shape.units * shape.tokens;
  if (tokens_total == 0) return;
  const int channels = static_cast<int>(shape.channels);
  switch (shape.dtype) {
    case DType::f16: return launch_typed<DType::f16>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
    case DType::bf16: return launch_typed<DType::bf16>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
    case DType::f32: return launch_typed<DType::f32>(x, tokens_total, channels, min_var, var, tmin, tmax, status, stream);
  }
}

}  // namespace dgq::cuda::detail

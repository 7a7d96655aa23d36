#pragma once
// Device-side helpers shared by the kernels: dtype loads/stores through the shared scalar
// rules (dgq/element_rules.hpp), warp reductions, and the order-preserving float keys used
// for exact min/max with integer atomics.
#include <cstdint>

#include <cuda_fp16.h>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/tensor.hpp"

namespace dgq::cuda::detail {

inline constexpr unsigned kFullMask = 0xffffffffu;
inline constexpr int kWarp = 32;

// Storage type per dtype; conversion to fp32 is exact, from fp32 round-half-even (rule 0).
template <DType T>
struct Storage;
// fp16 through the hardware's conversions (one instruction each, where the bit-level rule
// costs a dozen): the same bits as rules::half_to_float / float_to_half for every non-NaN value
// (widening is exact; narrowing is round-to-nearest-even with subnormals kept, as -ftz=false
// compiles it). NaNs take the rule, which keeps their payload. tests/gpu/test_gpu_conversions.cpp
// compares both on the device: every half, and every fp32 tie and neighbour of one.
template <>
struct Storage<DType::f16> {
  using type = std::uint16_t;
  static __device__ __forceinline__ float load(type v) {
    if ((v & 0x7fffu) > 0x7c00u) return rules::half_to_float(v);
    return __half2float(__ushort_as_half(v));
  }
  static __device__ __forceinline__ type store(float f) {
    if (isnan(f)) return rules::float_to_half(f);
    return __half_as_ushort(__float2half_rn(f));
  }
};
template <>
struct Storage<DType::bf16> {
  using type = std::uint16_t;
  static __device__ __forceinline__ float load(type v) { return rules::bf16_to_float(v); }
  static __device__ __forceinline__ type store(float f) { return rules::float_to_bf16(f); }
};
template <>
struct Storage<DType::f32> {
  using type = float;
  static __device__ __forceinline__ float load(type v) { return v; }
  static __device__ __forceinline__ type store(float f) { return f; }
};

// Min and max are exact whatever the order; only the sign of a zero may differ, and
// rule 6 (canonical_zero) erases that afterwards.
__device__ __forceinline__ float warp_min(float v) {
  for (int s = 16; s > 0; s >>= 1) v = fminf(v, __shfl_xor_sync(kFullMask, v, s));
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int s = 16; s > 0; s >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, s));
  return v;
}
__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v) {
  for (int s = 16; s > 0; s >>= 1) {
    const unsigned long long other = __shfl_xor_sync(kFullMask, v, s);
    v = other < v ? other : v;
  }
  return v;
}

// Monotonic map of non-NaN floats to unsigned keys (-0 sorts just below +0).
__device__ __forceinline__ std::uint32_t float_key(float f) {
  const std::uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_float(std::uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// The same min/max as warp_min/warp_max for finite and infinite values (a zero's sign aside,
// which rule 6 erases) in one warp-reduce instruction on sm_80+, through the ordered keys. A NaN
// orders differently than fminf/fmaxf treat it, but a row with a NaN is rejected (its token
// fault wins over anything its extremes cause), so its extremes are never used.
__device__ __forceinline__ float warp_min_of_finite(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return key_float(__reduce_min_sync(kFullMask, float_key(v)));
#else
  return warp_min(v);
#endif
}
__device__ __forceinline__ float warp_max_of_finite(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return key_float(__reduce_max_sync(kFullMask, float_key(v)));
#else
  return warp_max(v);
#endif
}

// Segment of token t given edges[0..segments] (edges[0] = 0, edges[segments] = tokens),
// starting the scan from a known lower bound.
__device__ __forceinline__ int segment_of(const std::uint32_t* edges, int segments, std::int64_t t, int from) {
  int s = from;
  while (s + 1 < segments && t >= static_cast<std::int64_t>(edges[s + 1])) ++s;
  return s;
}

inline unsigned grid_for(std::int64_t items, int per_block) {
  return static_cast<unsigned>((items + per_block - 1) / per_block);
}

}  // namespace dgq::cuda::detail

#pragma once
// The exponential of the blocked attention's softmax (attention.cpp): Cephes' expf (range
// reduction by ln 2 split in two constants, a degree-6 polynomial, 2^n from the exponent
// bits), written once for 8 AVX2 lanes and once for one float with the same operations in the
// same order (no fma: the build forbids contraction), so a score gets the same bits whether it
// falls in a vector or in the scalar tail, and in a native or a generic build.
//
// Why not std::exp: the scalar libm call was a quarter of the runner's time at n_ctx 4096
// (perf, 2026-12-02). Accuracy: within 2 ulp of the correctly rounded exp on [-87, 0]
// (tests/sim/test_softmax_exp.cpp); below -87 (where expf would return a subnormal) it
// returns 0, which a softmax term that small contributes anyway (the largest term is 1).
// Only arguments <= 0 are used (scores minus their running maximum).
#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::sim::forward {

namespace softmax_exp_constants {
inline constexpr float kLowest = -87.0f;  // below: 0
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;  // ln 2 = kLn2Hi - kLn2Lo, kLn2Hi exact in 10 bits
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
}  // namespace softmax_exp_constants

// exp(x) for x <= 0 (x > 0 is clamped to 0, i.e. returns 1; NaN gives NaN).
inline float softmax_exp(float x) {
  using namespace softmax_exp_constants;
  if (std::isnan(x)) return x;
  if (x < kLowest) return 0.0f;
  if (x > 0.0f) x = 0.0f;
  const float n = std::floor(x * kLog2e + 0.5f);
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float y = kP0;
  y = y * r + kP1;
  y = y * r + kP2;
  y = y * r + kP3;
  y = y * r + kP4;
  y = y * r + kP5;
  y = y * (r * r) + r + 1.0f;
  const auto bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23;
  return y * std::bit_cast<float>(bits);
}

#if defined(__AVX2__)
// The same, lane by lane.
inline __m256 softmax_exp8(__m256 x) {
  using namespace softmax_exp_constants;
  const __m256 input = x;
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(kLowest), _CMP_LT_OQ);
  x = _mm256_min_ps(x, _mm256_setzero_ps());
  x = _mm256_max_ps(x, _mm256_set1_ps(kLowest));  // keeps n in range; those lanes become 0 below
  const __m256 n = _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Hi)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Lo)));
  __m256 y = _mm256_set1_ps(kP0);
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP1));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP2));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP3));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP4));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP5));
  y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(y, _mm256_mul_ps(r, r)), r), _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 out = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  out = _mm256_andnot_ps(tiny, out);
  return _mm256_blendv_ps(out, input, nan);  // min/max above replaced a NaN by a number
}
#endif

}  // namespace dgq::sim::forward

#pragma once
// The exponential of the blocked attention's softmax (attention.cpp) on 8 AVX2 lanes: the core's
// dgq::attention_rules::prefill_softmax_exp (its constants, polynomial and order; no fma, the
// build forbids contraction) lane by lane, so a score gets the same bits whether it falls in a
// vector or in the scalar tail, and in a native or a generic build.
//
// Why not std::exp: the scalar libm call was a quarter of the runner's time at n_ctx 4096.
// Accuracy: within 2 ulp of the correctly rounded exp on [-87, 0] (tests/sim/test_softmax_exp.cpp);
// below -87 (where expf would return a subnormal) it returns 0, which a softmax term that small
// contributes anyway (the largest term is 1). Only arguments <= 0 are used (scores minus their
// running maximum).
#include "dgq/attention_rules.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::sim::forward {

#if defined(__AVX2__)
inline __m256 prefill_softmax_exp8(__m256 x) {
  namespace ar = dgq::attention_rules;
  const __m256 input = x;
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(ar::kExpFloor), _CMP_LT_OQ);
  x = _mm256_min_ps(x, _mm256_setzero_ps());
  x = _mm256_max_ps(x, _mm256_set1_ps(ar::kExpFloor));  // keeps n in range; those lanes become 0 below
  const __m256 n = _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(ar::kLog2e)), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(ar::kLn2Hi)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(ar::kLn2Lo)));
  __m256 y = _mm256_set1_ps(ar::exp_poly(0));
  for (int i = 1; i < 6; ++i) y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(ar::exp_poly(i)));
  y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(y, _mm256_mul_ps(r, r)), r), _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 out = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  out = _mm256_andnot_ps(tiny, out);
  return _mm256_blendv_ps(out, input, nan);  // min/max above replaced a NaN by a number
}
#endif

}  // namespace dgq::sim::forward

// ggml's q8_0 runtime quantizer, scalar but with the AVX2 path's arithmetic: amax in fp32,
// d = amax/127 rounded to fp16 (nearest-even, F16C), id = 127/amax, q = nearbyint(x*id).
#include <cmath>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::q8_0 {
namespace {

#if defined(__AVX2__)
// A full block with AVX2, as ggml's own x86 path does it: max of |x| (exact, order-free),
// the same scalar d and id, then x*id rounded by cvtps (nearest even in the default mode, i.e.
// nearbyint); |q| <= 127, so the saturating packs never clip.
void quantize_full_block(const float* x, Block& block) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
  const __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
  const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                 _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  const float amax = _mm_cvtss_f32(h);
  block.d = rules::float_to_half(amax / 127.0f);
  const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
  const __m256i q0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, id)), q1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, id));
  const __m256i q2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, id)), q3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, id));
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
  // packs work per 128-bit lane; the permute restores the element order.
  const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block.qs), ordered);
}
#endif

}  // namespace

void quantize_block(const float* x, int n, Block& block) {
#if defined(__AVX2__)
  if (n == kBlockValues) return quantize_full_block(x, block);
#endif
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;  // finite input: same as fmax, inlined
  block.d = rules::float_to_half(amax / 127.0f);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    // |x*id| <= 127 up to one rounding, so the int8 conversion never saturates.
    block.qs[j] = j < n ? static_cast<std::int8_t>(std::nearbyint(x[j] * id)) : std::int8_t{0};
  }
}

void dequantize_block(const Block& block, int n, float* out) {
  const float d = rules::half_to_float(block.d);
  for (int j = 0; j < n; ++j) out[j] = static_cast<float>(block.qs[j]) * d;
}

}  // namespace dgq::q8_0

// The fast table's q4_0 block: AVX2, the bits of the reference's quantize_q4_0
// (reference/src/schemes/ggml_q4_q5_blocks.cpp, which is ggml's scalar rule).
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/element_rules.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

namespace dgq::cpu::ggml {
using dgq::ggml::BlockQ4_0;
namespace {

// fp32 -> fp16 bits, nearest even, for the stored fields: F16C's conversion when compiled in
// (the bits of rules::float_to_half, subnormals and overflow to inf included).
inline std::uint16_t half_bits(float v) {
#if defined(__F16C__)
  return static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  return rules::float_to_half(v);
#endif
}

#if defined(__AVX2__)
// q4_0 with AVX2, the same bits as symmetric_codes<4> + pack_nibbles: max |x| is exact in any
// order, the signed max is x at the first index reaching it (movemask + count trailing zeros),
// d and id are the same scalars, x*id + 8.5 are the same two roundings per lane, and
// cvttps (truncation toward zero) is the C cast for these values in [0, 17).
void quantize_q4_0_avx2(const float* x, BlockQ4_0& b) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4], a[4];
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    a[k] = _mm256_andnot_ps(sign, v[k]);
  }
  const __m256 m = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  const __m256 amax = _mm256_set1_ps(_mm_cvtss_f32(h));
  std::uint32_t hits = 0;
  for (int k = 0; k < 4; ++k) {
    hits |= static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(a[k], amax, _CMP_EQ_OQ))) << (8 * k);
  }
  // amax == 0: every lane hits, x[0] is +-0 and d = +-0 / -8, as the scalar loop's max = 0.0f
  // gives d = -0; take the scalar loop's value then.
  const float max = _mm_cvtss_f32(h) == 0.0f ? 0.0f : x[__builtin_ctz(hits)];
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = half_bits(d);
  const __m256 vid = _mm256_set1_ps(id), offset = _mm256_set1_ps(8.5f);
  const __m256i top = _mm256_set1_epi32(15);
  __m256i q[4];
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), offset)), top);
  }
  const __m256i r0 = _mm256_or_si256(q[0], _mm256_slli_epi32(q[2], 4));           // elements 0..7 | 16..23
  const __m256i r1 = _mm256_or_si256(q[1], _mm256_slli_epi32(q[3], 4));           // elements 8..15 | 24..31
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xD8);  // 16 x u16 in order
  const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b.qs), bytes);
}
#endif

}  // namespace

bool quantize_q4_0(const float* x, BlockQ4_0& b) {
#if defined(__AVX2__)
  quantize_q4_0_avx2(x, b);
  return (b.d & 0x7c00u) != 0x7c00u;
#else
  return dgq::ggml::quantize_q4_0(x, b);
#endif
}

}  // namespace dgq::cpu::ggml

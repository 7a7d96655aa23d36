// The fast table's q8_0 rows: ggml's q8_0 runtime quantizer, AVX2 for full blocks, with the
// arithmetic of the reference's scalar path (reference/src/schemes/q8_0_block.cpp): amax in fp32,
// d = amax/127 rounded to fp16 (nearest-even, F16C), id = 127/amax, q = nearbyint(x*id).
#include <cmath>
#include <cstring>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

namespace dgq::cpu::q8_0 {
using dgq::q8_0::kBlockBytes;
using dgq::q8_0::kBlockValues;
using dgq::q8_0::RowStatus;
namespace {

// fp32 -> fp16 bits, nearest even: F16C's conversion when compiled in (the same bits as
// rules::float_to_half, subnormals and overflow to inf included; F16C ignores MXCSR's FTZ/DAZ),
// one instruction instead of the portable bit manipulation, per block.
inline std::uint16_t half_of(float v) {
#if defined(__F16C__)
  return static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  return rules::float_to_half(v);
#endif
}

[[maybe_unused]] inline float float_of(std::uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);  // exact
#else
  return rules::half_to_float(h);
#endif
}

[[maybe_unused]] bool finite_half(std::uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

#if defined(__AVX2__)
// A full block with AVX2, as ggml's own x86 path does it: max of |x| (exact, order-free),
// the same scalar d and id, then x*id rounded by cvtps (nearest even in the default mode, i.e.
// nearbyint); |q| <= 127, so the saturating packs never clip. Sets non_finite when some x is
// NaN/Inf (|x| >= inf or unordered), from the registers already loaded: callers need no
// separate pass over the input.
std::uint16_t quantize_full_block(const float* x, std::uint8_t* out, std::uint32_t& non_finite) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
  const __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
  const __m256 a0 = _mm256_andnot_ps(sign, v0), a1 = _mm256_andnot_ps(sign, v1);
  const __m256 a2 = _mm256_andnot_ps(sign, v2), a3 = _mm256_andnot_ps(sign, v3);
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  const __m256 bad =
      _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(a0, inf, _CMP_NLT_UQ), _mm256_cmp_ps(a1, inf, _CMP_NLT_UQ)),
                   _mm256_or_ps(_mm256_cmp_ps(a2, inf, _CMP_NLT_UQ), _mm256_cmp_ps(a3, inf, _CMP_NLT_UQ)));
  non_finite |= static_cast<std::uint32_t>(_mm256_movemask_ps(bad));
  const __m256 m = _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  const float amax = _mm_cvtss_f32(h);
  const std::uint16_t d = half_of(amax / 127.0f);
  std::memcpy(out, &d, sizeof d);  // little-endian host (x86)
  const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
  const __m256i q0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, id)), q1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, id));
  const __m256i q2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, id)), q3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, id));
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
  // packs work per 128-bit lane; the permute restores the element order.
  const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + sizeof d), ordered);
  return d;
}
#endif

}  // namespace

// Full blocks take the AVX2 path; a partial block (and every block of a build without AVX2)
// is the reference's own code, called rather than copied.
std::uint16_t quantize_block_into(const float* x, int n, std::uint8_t* out) {
#if defined(__AVX2__)
  std::uint32_t unused = 0;  // callers of the block function check finiteness themselves
  if (n == kBlockValues) return quantize_full_block(x, out, unused);
#endif
  return dgq::q8_0::quantize_block_into(x, n, out);
}

RowStatus quantize_row_into(const float* x, std::int64_t n, std::uint8_t* out) {
  std::uint32_t finite_scales = 1, non_finite = 0;
  std::int64_t first = 0;
#if defined(__AVX2__)
  for (; first + kBlockValues <= n; first += kBlockValues, out += kBlockBytes)
    finite_scales &= finite_half(quantize_full_block(x + first, out, non_finite)) ? 1u : 0u;
#endif
  const RowStatus rest = dgq::q8_0::quantize_row_into(x + first, n - first, out);
  if (non_finite != 0 || rest == RowStatus::non_finite_input) return RowStatus::non_finite_input;
  return finite_scales != 0 && rest == RowStatus::ok ? RowStatus::ok : RowStatus::scale_overflow;
}

bool dequantize_row(const std::uint8_t* blocks, std::int64_t n, float* out) {
  std::uint32_t finite = 1;
  std::int64_t first = 0;
#if defined(__AVX2__)
  for (; first + kBlockValues <= n; first += kBlockValues, blocks += kBlockBytes) {
    std::uint16_t bits;
    std::memcpy(&bits, blocks, sizeof bits);
    finite &= finite_half(bits) ? 1u : 0u;
    const auto* qs = reinterpret_cast<const std::int8_t*>(blocks + sizeof bits);
    // int8 -> int32 -> fp32 is exact, then one rounded multiply: the scalar loop's values.
    const __m256 vd = _mm256_set1_ps(float_of(bits));
    for (int j = 0; j < kBlockValues; j += 8) {
      const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs + j)));
      _mm256_storeu_ps(out + first + j, _mm256_mul_ps(_mm256_cvtepi32_ps(q), vd));
    }
  }
#endif
  const bool rest_finite = dgq::q8_0::dequantize_row(blocks, n - first, out + first);
  return rest_finite && finite != 0;
}

}  // namespace dgq::cpu::q8_0

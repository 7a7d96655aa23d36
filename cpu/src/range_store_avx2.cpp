// The fast table's store_fp16_ranges8 (dgq/kernels/cpu_kernels.hpp): dgq2 rule V4 for eight
// fp16 ranges at once with F16C, when all sixteen extremes are fp16 numbers (as every extreme
// of fp16 input is): then rounding outwards changes nothing and the pair is the conversion
// itself. The reference stores them one by one (dgq/schemes/dgq2/range_store.hpp).
#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

#include "fast_kernels.hpp"

namespace dgq::cpu {

bool store_fp16_ranges8(const float* mins, const float* maxs, int levels, std::vector<std::uint8_t>& out, float* lo,
                        float* inv) {
#if defined(__AVX2__) && defined(__F16C__)
  const __m256 mn = _mm256_loadu_ps(mins), mx = _mm256_loadu_ps(maxs);
  __m128i hl = _mm256_cvtps_ph(mn, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m128i hh = _mm256_cvtps_ph(mx, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // Exact conversions only (an fp16 number converts to itself; a value beyond 65504 to inf).
  const __m256 exact = _mm256_and_ps(_mm256_cmp_ps(_mm256_cvtph_ps(hl), mn, _CMP_EQ_OQ),
                                     _mm256_cmp_ps(_mm256_cvtph_ps(hh), mx, _CMP_EQ_OQ));
  if (_mm256_movemask_ps(exact) != 0xff) return false;
  // Zero without sign (canonical_half_zero).
  const __m128i negative_zero = _mm_set1_epi16(static_cast<short>(0x8000));
  hl = _mm_andnot_si128(_mm_cmpeq_epi16(hl, negative_zero), hl);
  hh = _mm_andnot_si128(_mm_cmpeq_epi16(hh, negative_zero), hh);
  const std::size_t at = out.size();
  out.resize(at + 32);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + at), _mm_unpacklo_epi16(hl, hh));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + at + 16), _mm_unpackhi_epi16(hl, hh));
  const __m256 l = _mm256_cvtph_ps(hl), h = _mm256_cvtph_ps(hh);
  _mm256_storeu_ps(lo, l);
  // uniform_inverse: levels / (hi - lo), 0 for a flat range or an infinite quotient.
  const __m256 q = _mm256_div_ps(_mm256_set1_ps(static_cast<float>(levels)), _mm256_sub_ps(h, l));
  const __m256 magnitude = _mm256_and_ps(q, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  const __m256 zero =
      _mm256_or_ps(_mm256_cmp_ps(h, l, _CMP_EQ_OQ), _mm256_cmp_ps(magnitude, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ));
  _mm256_storeu_ps(inv, _mm256_andnot_ps(zero, q));
  return true;
#else
  (void)mins, (void)maxs, (void)levels, (void)out, (void)lo, (void)inv;
  return false;
#endif
}

}  // namespace dgq::cpu

// The fast table's fp8-e4m3 runs: AVX2, the bytes of the reference's scalar runs
// (reference/src/kernels/reference_kernels.cpp): dgq::fp8::float_to_e4m3 of x[j] / scale, each
// branch of it computed for eight lanes and chosen by blends.
#include <cmath>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::fp8 {
namespace {

#if defined(__AVX2__)
// float_to_e4m3 of eight values, as eight bytes (dgq/baselines/fp8_e4m3.hpp, every branch):
//   |x| NaN -> 0x7f; |x| >= 448 (inf included) -> 0x7e; |x| < 2^-6 -> rint(|x| * 2^9) (exact
//   scaling, cvtps rounds to nearest even in the default mode, as rintf does); else exponent and
//   top three mantissa bits, rounded to nearest even on the twenty bits below, capped at 0x7e.
// The sign bit is or-ed in last. Integer compares are signed; |x|'s bits are below 2^31.
__m128i eight_e4m3(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i abs = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(bits, 24), _mm256_set1_epi32(0x80));
  const __m256i mantissa = _mm256_and_si256(abs, _mm256_set1_epi32(0x7fffff));
  const __m256i exponent = _mm256_sub_epi32(_mm256_srli_epi32(abs, 23), _mm256_set1_epi32(127 - 7));
  __m256i r = _mm256_or_si256(_mm256_slli_epi32(exponent, 3), _mm256_srli_epi32(mantissa, 20));
  const __m256i rest = _mm256_and_si256(mantissa, _mm256_set1_epi32(0xfffff));
  const __m256i half = _mm256_set1_epi32(0x80000);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i odd = _mm256_cmpeq_epi32(_mm256_and_si256(r, one), one);
  const __m256i up =
      _mm256_or_si256(_mm256_cmpgt_epi32(rest, half), _mm256_and_si256(_mm256_cmpeq_epi32(rest, half), odd));
  r = _mm256_sub_epi32(r, up);  // up is -1 where it rounds up
  r = _mm256_min_epi32(r, _mm256_set1_epi32(dgq::fp8::kE4M3MaxBits));
  const __m256i units = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(abs), _mm256_set1_ps(512.0f)));
  r = _mm256_blendv_epi8(r, units, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3c800000), abs));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(dgq::fp8::kE4M3MaxBits),
                         _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x43dfffff)));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(dgq::fp8::kE4M3NaN),
                         _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000)));
  r = _mm256_or_si256(r, sign);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  return _mm_packus_epi16(w, w);
}
#endif

}  // namespace

void e4m3_codes(const float* x, std::int64_t n, float scale, std::uint8_t* out) {
  std::int64_t j = 0;
#if defined(__AVX2__)
  const __m256 s = _mm256_set1_ps(scale);
  for (; j + 8 <= n; j += 8) {  // one correctly rounded division per lane: the scalar quotient
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), eight_e4m3(_mm256_div_ps(_mm256_loadu_ps(x + j), s)));
  }
#endif
  for (; j < n; ++j) out[j] = dgq::fp8::float_to_e4m3(x[j] / scale);
}

}  // namespace dgq::cpu::fp8

// The fast table's fp16 <-> fp32 buffer conversions (the schemes' tensor_io): F16C's, fp16 ->
// fp32 exact and fp32 -> fp16 with _MM_FROUND_TO_NEAREST_INT rounding to nearest even,
// subnormals included (F16C ignores MXCSR.FTZ/DAZ), i.e. the bits of dgq::rules; the scalar
// tail is the rule itself.
#include <cstdint>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "dgq/element_rules.hpp"
#include "fast_kernels.hpp"

namespace dgq::cpu {

void halves_to_floats(const std::uint16_t* h, float* f, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
#endif
  for (; i < n; ++i) f[i] = rules::half_to_float(h[i]);
}

void floats_to_halves(const float* f, std::uint16_t* h, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i r = _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), r);
  }
#endif
  for (; i < n; ++i) h[i] = rules::float_to_half(f[i]);
}

}  // namespace dgq::cpu

// The fast table's pack_crumbs: 2-bit codes four to a byte with AVX2, the bytes of the
// reference's scalar loop. The codes are <= 3, so shifts and ors equal weighted sums:
// maddubs(1, 4) gives q0 + 4 q1 per pair, madd(1, 16) adds the next pair times 16, and each
// 32-bit sum (<= 255) is one output byte.
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::codes {

void pack_crumbs(const std::uint8_t* q, std::int64_t n, std::uint8_t* out) {
  std::int64_t k = 0;
#if defined(__AVX2__)
  const __m256i pair_weights = _mm256_set1_epi16(0x0401);      // bytes 1, 4
  const __m256i quad_weights = _mm256_set1_epi32(0x00100001);  // words 1, 16
  for (; 4 * k + 64 <= n; k += 16) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 4 * k));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 4 * k + 32));
    const __m256i sa = _mm256_madd_epi16(_mm256_maddubs_epi16(a, pair_weights), quad_weights);
    const __m256i sb = _mm256_madd_epi16(_mm256_maddubs_epi16(b, pair_weights), quad_weights);
    // packs work per 128-bit lane: words a0..3 b0..3 | a4..7 b4..7, then the permute orders them.
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(sa, sb), 0xD8);
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k), bytes);
  }
#endif
  for (; k < n / 4; ++k) {
    out[k] = static_cast<std::uint8_t>(q[4 * k] | q[4 * k + 1] << 2 | q[4 * k + 2] << 4 | q[4 * k + 3] << 6);
  }
}

}  // namespace dgq::cpu::codes

// The fast table's DGQ v3 runs (rules W4, W5, W8): AVX2, the bits of the reference's scalar ones
// (reference/src/schemes/dgq3/symmetric_codes.cpp, grid_codes.cpp), eight channels per instruction.
#include <cmath>

#include "dgq/dgq3_grids.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::dgq3 {

#if defined(__AVX2__)
namespace {

__m256 absolute(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

}  // namespace

namespace {

// Rows first .. count-1 of the ring, channels [c, c + 8 * lanes), added oldest first into
// `lanes` accumulators of eight channels each (independent chains: an add's latency is hidden
// behind the others'), then divided by n.
template <int lanes>
void window_mean_lanes(const float* ring, std::int64_t window, std::int64_t first, std::int64_t count,
                       std::int64_t channels, std::int64_t c, __m256 n, float* mean) {
  __m256 a[lanes];
  for (int l = 0; l < lanes; ++l) a[l] = _mm256_setzero_ps();
  std::int64_t slot = first % window;  // one division per call, not one per row
  for (std::int64_t j = first; j < count; ++j) {
    const float* r = ring + slot * channels + c;
    for (int l = 0; l < lanes; ++l) a[l] = _mm256_add_ps(a[l], _mm256_loadu_ps(r + 8 * l));
    if (++slot == window) slot = 0;
  }
  for (int l = 0; l < lanes; ++l) _mm256_storeu_ps(mean + c + 8 * l, count > first ? _mm256_div_ps(a[l], n) : a[l]);
}

}  // namespace

// Each channel's sum runs over the rows oldest first, as the rule's; the lanes are channels,
// so nothing is reassociated. The division is IEEE's in both.
void window_mean(const float* ring, std::int64_t window, std::int64_t count, std::int64_t channels, float* mean) {
  const std::int64_t held = count < window ? count : window;
  const std::int64_t first = count - held;
  const __m256 n = _mm256_set1_ps(static_cast<float>(held));
  std::int64_t c = 0;
  for (; c + 64 <= channels; c += 64) window_mean_lanes<8>(ring, window, first, count, channels, c, n, mean);
  for (; c + 8 <= channels; c += 8) window_mean_lanes<1>(ring, window, first, count, channels, c, n, mean);
  for (; c < channels; ++c) {
    float s = 0.0f;
    for (std::int64_t j = first; j < count; ++j) s = s + ring[(j % window) * channels + c];
    mean[c] = held > 0 ? s / static_cast<float>(held) : 0.0f;
  }
}

// The largest |y| by a vector max, then the first element that attains it (the reference keeps
// the first on ties, its comparison being strict).
float signed_extreme(const float* y, std::int64_t n) {
  __m256 m = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, absolute(_mm256_loadu_ps(y + i)));
  float largest = horizontal_max(m);
  for (; i < n; ++i) largest = std::fmax(largest, std::fabs(y[i]));
  if (largest == 0.0f) return 0.0f;
  for (i = 0; std::fabs(y[i]) != largest; ++i) {}
  return y[i];
}

// Clamping before the conversion equals clamping after rint (the bounds are integers), and the
// conversion rounds to nearest even in the default mode, as rintf does; -0 converts to 0.
void symmetric_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u) {
  const int offset = 1 << (bits - 1);
  const __m256 inv = _mm256_set1_ps(inverse);
  const __m256 lo = _mm256_set1_ps(-static_cast<float>(offset)), hi = _mm256_set1_ps(static_cast<float>(offset - 1));
  const __m256i add = _mm256_set1_epi32(offset);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(y + i), inv), lo), hi);
    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(t), add);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(u + i), _mm_packus_epi16(w, w));
  }
  for (; i < n; ++i) {
    const float q =
        std::fmin(std::fmax(rintf(y[i] * inverse), -static_cast<float>(offset)), static_cast<float>(offset - 1));
    u[i] = static_cast<std::uint8_t>(static_cast<int>(q) + offset);
  }
}

void symmetric_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y) {
  const int offset = 1 << (bits - 1);
  const __m256 scale = _mm256_set1_ps(d);
  const __m256i sub = _mm256_set1_epi32(offset);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + i)));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, sub)), scale));
  }
  for (; i < n; ++i) y[i] = static_cast<float>(static_cast<int>(u[i]) - offset) * d;
}

// Rule W8: a code is the count of midpoints below the scaled value; each comparison's all-ones
// mask is -1 as an integer, so subtracting the masks counts them (at most 31 per lane).
void grid_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u) {
  const int mids = (1 << bits) - 1;
  __m256 mid[31];
  for (int m = 0; m < mids; ++m)
    mid[m] = _mm256_set1_ps(0.5f * static_cast<float>(rules::grid_level(bits, m) + rules::grid_level(bits, m + 1)));
  const __m256 inv = _mm256_set1_ps(inverse);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(y + i), inv);
    __m256i count = _mm256_setzero_si256();
    for (int m = 0; m < mids; ++m)
      count = _mm256_sub_epi32(count, _mm256_castps_si256(_mm256_cmp_ps(mid[m], v, _CMP_LT_OQ)));
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(count), _mm256_extracti128_si256(count, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(u + i), _mm_packus_epi16(w, w));
  }
  for (; i < n; ++i) u[i] = static_cast<std::uint8_t>(rules::grid_code(y[i] * inverse, bits));
}

void grid_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y) {
  float level[32];
  for (int m = 0; m < (1 << bits); ++m) level[m] = static_cast<float>(rules::grid_level(bits, m));
  const __m256 scale = _mm256_set1_ps(d);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + i)));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_i32gather_ps(level, q, 4), scale));
  }
  for (; i < n; ++i) y[i] = level[u[i]] * d;
}
#endif

}  // namespace dgq::cpu::dgq3

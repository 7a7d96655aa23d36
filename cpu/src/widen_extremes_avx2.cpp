// The fast table's widen_extremes: one pass over a row of the input (F16C, a shift for bf16, a
// load for fp32) that stores the fp32 values, detects a NaN/Inf and keeps each group's extremes
// in registers, where the reference widens, checks and takes min_max in three passes. The
// values are the exact widening; the extremes are order-free up to the sign of a zero, which
// the stored endpoints drop (+0 here), so they store what min_max's do.
#include <algorithm>
#include <cmath>

#include "dgq/element_rules.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

namespace dgq::cpu::codes {
namespace {

#if defined(__AVX2__) && defined(__F16C__)
struct HalfLoad {
  const std::uint16_t* p;
  __m256 v(std::int64_t d) const { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + d))); }
  float s(std::int64_t d) const { return rules::half_to_float(p[d]); }
};
struct Bf16Load {
  const std::uint16_t* p;
  __m256 v(std::int64_t d) const {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + d));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
  }
  float s(std::int64_t d) const { return rules::bf16_to_float(p[d]); }
};
struct FloatLoad {
  const float* p;
  __m256 v(std::int64_t d) const { return _mm256_loadu_ps(p + d); }
  float s(std::int64_t d) const { return p[d]; }
};

float no_negative_zero(float v) { return v == 0.0f ? 0.0f : v; }

template <class Load>
bool widen_extremes_with(Load in, std::int64_t n, std::int64_t group, float* row, kernels::Extremes* ext) {
  const __m256 sign = _mm256_set1_ps(-0.0f), inf = _mm256_set1_ps(INFINITY);
  __m256 bad = _mm256_setzero_ps();
  bool finite_tail = true;
  for (std::int64_t first = 0; first < n; first += group, ++ext) {
    const std::int64_t end = std::min(n, first + group);
    __m256 lo = inf, hi = _mm256_set1_ps(-INFINITY);
    std::int64_t d = first;
    for (; d + 8 <= end; d += 8) {
      const __m256 v = in.v(d);
      _mm256_storeu_ps(row + d, v);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_andnot_ps(sign, v), inf, _CMP_NLT_UQ));  // |v| >= inf or NaN
      lo = _mm256_min_ps(v, lo);
      hi = _mm256_max_ps(v, hi);
    }
    __m128 l = _mm_min_ps(_mm256_castps256_ps128(lo), _mm256_extractf128_ps(lo, 1));
    l = _mm_min_ps(l, _mm_movehl_ps(l, l));
    l = _mm_min_ss(l, _mm_shuffle_ps(l, l, 1));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(hi), _mm256_extractf128_ps(hi, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    float lo_s = _mm_cvtss_f32(l), hi_s = _mm_cvtss_f32(h);
    for (; d < end; ++d) {
      const float v = in.s(d);
      row[d] = v;
      finite_tail = finite_tail && std::isfinite(v);
      lo_s = v < lo_s ? v : lo_s;
      hi_s = v > hi_s ? v : hi_s;
    }
    *ext = {no_negative_zero(lo_s), no_negative_zero(hi_s)};
  }
  return finite_tail && _mm256_movemask_ps(bad) == 0;
}
#endif

}  // namespace

bool widen_extremes(const void* src, DType dt, std::int64_t n, std::int64_t group, float* row, kernels::Extremes* ext) {
#if defined(__AVX2__) && defined(__F16C__)
  switch (dt) {
    case DType::f16: return widen_extremes_with(HalfLoad{static_cast<const std::uint16_t*>(src)}, n, group, row, ext);
    case DType::bf16: return widen_extremes_with(Bf16Load{static_cast<const std::uint16_t*>(src)}, n, group, row, ext);
    case DType::f32: return widen_extremes_with(FloatLoad{static_cast<const float*>(src)}, n, group, row, ext);
  }
#endif
  return kernels::reference_kernels().widen_extremes(src, dt, n, group, row, ext);
}

}  // namespace dgq::cpu::codes

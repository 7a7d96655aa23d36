// The row loops vectorised with AVX2 + F16C + FMA. Same bits as row_kernels_scalar.cpp by
// construction: the 32 canonical accumulators are four 8-lane vectors (lane d mod 32), the
// tree is applied in the spec's order, every fma is an explicit vfmadd, and fp16 conversions
// are the exact/round-to-nearest-even hardware ones. Without these ISA extensions the scalar
// code is used.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dgq/element_rules.hpp"
#include "row_kernels.hpp"

#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
#include <immintrin.h>
#define DGQ_FAST_AVX2 1
#endif

namespace dgq::kernels {

#ifdef DGQ_FAST_AVX2
bool fast_is_vectorized() { return true; }

namespace fast {
namespace {

constexpr int kLanes = rules::kCanonicalLanes;

__m256 load8(const void* src, DType dt, std::int64_t d) {
  switch (dt) {
    case DType::f16:
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(src) + d)));
    case DType::bf16: {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(src) + d));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
    }
    case DType::f32:
      break;
  }
  return _mm256_loadu_ps(static_cast<const float*>(src) + d);
}

// Rule 1's tree (s = 16, 8, 4, 2, 1) over the accumulators a[0..3] = acc[0..31].
float reduce_tree(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 s16lo = _mm256_add_ps(a0, a2);  // acc[j] + acc[j+16], j = 0..7
  const __m256 s16hi = _mm256_add_ps(a1, a3);  // j = 8..15
  const __m256 s8 = _mm256_add_ps(s16lo, s16hi);  // acc[j] + acc[j+8], j = 0..7
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
  return _mm_cvtss_f32(s1);
}

// Adds the elements d >= tail_start (fewer than 32) to acc[d mod 32]. Lanes with no element
// add +0.0f, which leaves an accumulator unchanged: it starts at +0.0f and a sum is -0.0f only
// when both addends are, so no accumulator is ever -0.0f.
template <class Element>
void add_tail(__m256& a0, __m256& a1, __m256& a2, __m256& a3, std::int64_t count, Element element) {
  alignas(32) float pad[kLanes] = {};
  for (std::int64_t i = 0; i < count; ++i) pad[i] = element(i);
  a0 = _mm256_add_ps(a0, _mm256_load_ps(pad));
  a1 = _mm256_add_ps(a1, _mm256_load_ps(pad + 8));
  a2 = _mm256_add_ps(a2, _mm256_load_ps(pad + 16));
  a3 = _mm256_add_ps(a3, _mm256_load_ps(pad + 24));
}

}  // namespace

void load_row(const void* src, DType dt, std::int64_t n, float* row) {
  std::int64_t d = 0;
  for (; d + 8 <= n; d += 8) _mm256_storeu_ps(row + d, load8(src, dt, d));
  const ConstTensor view{src, dt, 1, n};
  for (; d < n; ++d) row[d] = load_element(view, d);
}

float canonical_sum(const float* x, std::int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + d));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + d + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + d + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + d + 24));
  }
  if (d < n) add_tail(a0, a1, a2, a3, n - d, [&](std::int64_t i) { return x[d + i]; });
  return reduce_tree(a0, a1, a2, a3);
}

float canonical_sum_of_squares(const float* x, std::int64_t n, float mean) {
  const __m256 m = _mm256_set1_ps(mean);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    const __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(x + d), m);
    const __m256 e1 = _mm256_sub_ps(_mm256_loadu_ps(x + d + 8), m);
    const __m256 e2 = _mm256_sub_ps(_mm256_loadu_ps(x + d + 16), m);
    const __m256 e3 = _mm256_sub_ps(_mm256_loadu_ps(x + d + 24), m);
    a0 = _mm256_fmadd_ps(e0, e0, a0);
    a1 = _mm256_fmadd_ps(e1, e1, a1);
    a2 = _mm256_fmadd_ps(e2, e2, a2);
    a3 = _mm256_fmadd_ps(e3, e3, a3);
  }
  // fma(delta, delta, acc) for the tail: delta*delta is added to acc with one rounding, which
  // an add of the exactly rounded square would not give; so the tail is done lane by lane.
  if (d < n) {
    alignas(32) float acc[kLanes];
    _mm256_store_ps(acc, a0);
    _mm256_store_ps(acc + 8, a1);
    _mm256_store_ps(acc + 16, a2);
    _mm256_store_ps(acc + 24, a3);
    for (std::int64_t i = 0; d + i < n; ++i) acc[i] = rules::square_step(acc[i], x[d + i] - mean);
    a0 = _mm256_load_ps(acc);
    a1 = _mm256_load_ps(acc + 8);
    a2 = _mm256_load_ps(acc + 16);
    a3 = _mm256_load_ps(acc + 24);
  }
  return reduce_tree(a0, a1, a2, a3);
}

namespace {

template <DType T>
__m256 load8_as(const void* src, std::int64_t d) {
  return load8(src, T, d);  // T is a constant here: the switch folds away
}

float horizontal(__m256 v, bool take_min) {
  __m128 x = take_min ? _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1))
                      : _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = take_min ? _mm_min_ps(x, _mm_movehl_ps(x, x)) : _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = take_min ? _mm_min_ss(x, _mm_shuffle_ps(x, x, 1)) : _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
  return _mm_cvtss_f32(x);
}

// Pass 1 on one row, for one dtype and range shape (both compile-time, so the inner loop has
// no branches). Elements go to the canonical accumulators in chunks of 32 (four vectors), so
// the lane of element d is d mod 32.
template <DType T, RangeShape S>
RowStats scan_row_as(const void* src, std::int64_t n, float* row, float* lo, float* hi) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 inf = _mm256_set1_ps(INFINITY);
  __m256 bad = _mm256_setzero_ps();
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  __m256 row_lo = inf, row_hi = _mm256_set1_ps(-INFINITY);
  auto visit = [&](__m256 x, std::int64_t d) {
    _mm256_storeu_ps(row + d, x);
    // |x| >= inf or unordered: Inf or NaN.
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_and_ps(x, abs_mask), inf, _CMP_NLT_UQ));
    if constexpr (S == RangeShape::per_channel) {
      _mm256_storeu_ps(lo + d, _mm256_min_ps(_mm256_loadu_ps(lo + d), x));
      _mm256_storeu_ps(hi + d, _mm256_max_ps(_mm256_loadu_ps(hi + d), x));
    } else {
      row_lo = _mm256_min_ps(row_lo, x);
      row_hi = _mm256_max_ps(row_hi, x);
    }
  };
  std::int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    const __m256 x0 = load8_as<T>(src, d), x1 = load8_as<T>(src, d + 8);
    const __m256 x2 = load8_as<T>(src, d + 16), x3 = load8_as<T>(src, d + 24);
    visit(x0, d);
    visit(x1, d + 8);
    visit(x2, d + 16);
    visit(x3, d + 24);
    a0 = _mm256_add_ps(a0, x0);
    a1 = _mm256_add_ps(a1, x1);
    a2 = _mm256_add_ps(a2, x2);
    a3 = _mm256_add_ps(a3, x3);
  }
  const std::int64_t chunk_start = d;
  for (; d + 8 <= n; d += 8) visit(load8_as<T>(src, d), d);
  RowStats st;
  st.finite = _mm256_movemask_ps(bad) == 0;
  const ConstTensor view{src, T, 1, n};
  float tail_lo = INFINITY, tail_hi = -INFINITY;
  for (; d < n; ++d) {
    const float x = load_element(view, d);
    row[d] = x;
    if (!std::isfinite(x)) st.finite = false;
    if constexpr (S == RangeShape::per_channel) {
      lo[d] = std::fmin(lo[d], x);
      hi[d] = std::fmax(hi[d], x);
    } else {
      tail_lo = std::min(tail_lo, x);
      tail_hi = std::max(tail_hi, x);
    }
  }
  if constexpr (S == RangeShape::whole_row) {
    // Comparisons instead of fminf/fmaxf (libm calls): no NaN reaches here unless the row is
    // rejected anyway, and the sign of a zero extreme is fixed by rule 6.
    const float row_min = std::min(horizontal(row_lo, true), tail_lo);
    const float row_max = std::max(horizontal(row_hi, false), tail_hi);
    lo[0] = std::min(lo[0], row_min);
    hi[0] = std::max(hi[0], row_max);
  }
  if (!st.finite) return st;
  // The last n - chunk_start (< 32) elements go to acc[d mod 32] through a zero-padded chunk.
  if (chunk_start < n) add_tail(a0, a1, a2, a3, n - chunk_start, [&](std::int64_t i) { return row[chunk_start + i]; });
  st.sum = reduce_tree(a0, a1, a2, a3);
  st.sum_squares = canonical_sum_of_squares(row, n, st.sum / static_cast<float>(n));
  return st;
}

template <DType T>
void quantize_row_as(const void* src, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 top = _mm256_set1_ps(static_cast<float>(rules::kLevels));
  const __m256i offset = _mm256_set1_epi32(rules::kCodeOffset);
  auto codes8 = [&](std::int64_t d) {
    const __m256 x = load8_as<T>(src, d);
    __m256 q = _mm256_mul_ps(_mm256_sub_ps(x, _mm256_loadu_ps(lo + d)), _mm256_loadu_ps(inv + d));
    q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, zero), top);
    return _mm256_sub_epi32(_mm256_cvttps_epi32(q), offset);
  };
  std::int64_t d = 0;
  for (; d + 32 <= n; d += 32) {
    // Pack 4 x 8 int32 to 32 int8; packs work per 128-bit lane, the permute restores order.
    const __m256i c01 = _mm256_packs_epi32(codes8(d), codes8(d + 8));
    const __m256i c23 = _mm256_packs_epi32(codes8(d + 16), codes8(d + 24));
    const __m256i bytes = _mm256_packs_epi16(c01, c23);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + d), _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; d + 8 <= n; d += 8) {
    const __m256i c = codes8(d);
    const __m128i c16 = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + d), _mm_packs_epi16(c16, c16));
  }
  const ConstTensor view{src, T, 1, n};
  for (; d < n; ++d) codes[d] = rules::quantize_code(load_element(view, d), lo[d], inv[d]);
}

template <RangeShape S>
RowStats scan_row_shape(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi) {
  switch (dt) {
    case DType::f16:
      return scan_row_as<DType::f16, S>(src, n, row, lo, hi);
    case DType::bf16:
      return scan_row_as<DType::bf16, S>(src, n, row, lo, hi);
    case DType::f32:
      break;
  }
  return scan_row_as<DType::f32, S>(src, n, row, lo, hi);
}

}  // namespace

RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape) {
  return shape == RangeShape::per_channel ? scan_row_shape<RangeShape::per_channel>(src, dt, n, row, lo, hi)
                                          : scan_row_shape<RangeShape::whole_row>(src, dt, n, row, lo, hi);
}

void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  switch (dt) {
    case DType::f16:
      return quantize_row_as<DType::f16>(src, n, lo, inv, codes);
    case DType::bf16:
      return quantize_row_as<DType::bf16>(src, n, lo, inv, codes);
    case DType::f32:
      return quantize_row_as<DType::f32>(src, n, lo, inv, codes);
  }
}

void dequantize_row(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt,
                    void* out) {
  const __m256i offset = _mm256_set1_epi32(rules::kCodeOffset);
  std::int64_t d = 0;
  for (; d + 8 <= n; d += 8) {
    const __m256i c = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + d)));
    const __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(c, offset));
    const __m256 y = _mm256_fmadd_ps(q, _mm256_loadu_ps(scale + d), _mm256_loadu_ps(lo + d));
    switch (dt) {
      case DType::f16:
        _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(out) + d),
                         _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));
        break;
      case DType::bf16: {
        // rules::float_to_bf16 for finite values (a dequantized value is never NaN).
        const __m256i u = _mm256_castps_si256(y);
        const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
        const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(out) + d), packed);
        break;
      }
      case DType::f32:
        _mm256_storeu_ps(static_cast<float*>(out) + d, y);
        break;
    }
  }
  const MutTensor view{out, dt, 1, n};
  for (; d < n; ++d) store_element(view, d, rules::dequantize_code(codes[d], lo[d], scale[d]));
}

}  // namespace fast

#else  // no AVX2/F16C/FMA: the scalar loops are the fast path.

bool fast_is_vectorized() { return false; }

namespace fast {
void load_row(const void* src, DType dt, std::int64_t n, float* row) { scalar::load_row(src, dt, n, row); }
float canonical_sum(const float* x, std::int64_t n) { return scalar::canonical_sum(x, n); }
float canonical_sum_of_squares(const float* x, std::int64_t n, float mean) {
  return scalar::canonical_sum_of_squares(x, n, mean);
}
RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape) {
  return scalar::scan_row(src, dt, n, row, lo, hi, shape);
}
void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  scalar::quantize_row(src, dt, n, lo, inv, codes);
}
void dequantize_row(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt,
                    void* out) {
  scalar::dequantize_row(codes, n, lo, scale, dt, out);
}
}  // namespace fast
#endif

}  // namespace dgq::kernels

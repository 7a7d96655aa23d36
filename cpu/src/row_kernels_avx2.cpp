// The row loops vectorised with AVX2 + F16C + FMA. Same bits as row_kernels_scalar.cpp by
// construction: the 32 canonical accumulators are four 8-lane vectors (lane d mod 32), the
// tree is applied in the spec's order, every fma is an explicit vfmadd, and fp16 conversions
// are the exact/round-to-nearest-even hardware ones. Without these ISA extensions the scalar
// code is used.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dgq/element_rules.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
#include <immintrin.h>
#define DGQ_FAST_AVX2 1
#endif

namespace dgq::cpu::row {
using kernels::RangeShape;
using kernels::RowStats;

#ifdef DGQ_FAST_AVX2
bool fast_is_vectorized() { return true; }

namespace {

constexpr int kLanes = rules::kCanonicalLanes;

__m256 load8(const void* src, DType dt, std::int64_t d) {
  switch (dt) {
    case DType::f16:
      return _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(src) + d)));
    case DType::bf16: {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(src) + d));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
    }
    case DType::f32: break;
  }
  return _mm256_loadu_ps(static_cast<const float*>(src) + d);
}

// Rule 1's tree (s = 16, 8, 4, 2, 1) over the accumulators a[0..3] = acc[0..31].
float reduce_tree(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 s16lo = _mm256_add_ps(a0, a2);     // acc[j] + acc[j+16], j = 0..7
  const __m256 s16hi = _mm256_add_ps(a1, a3);     // j = 8..15
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

// Only asked when a row's sum is not finite: the sum alone cannot tell a NaN/Inf element from
// finite bf16/f32 values whose sum overflows (rule 1 reports the two differently).
bool all_finite(const float* row, std::int64_t n) {
  for (std::int64_t d = 0; d < n; ++d)
    if (!std::isfinite(row[d])) return false;
  return true;
}

// Running extremes of a block: per channel in lo/hi (n entries), or over the whole block in
// two vectors that are folded into lo[0]/hi[0] once per block (finish()). min/max are exact,
// so the grouping does not change a value; for finite rows no NaN reaches them.
template <RangeShape S>
struct Extremes {
  float* lo;
  float* hi;
  __m256 block_lo = _mm256_set1_ps(INFINITY), block_hi = _mm256_set1_ps(-INFINITY);
  float tail_lo = INFINITY, tail_hi = -INFINITY;

  void add8(__m256 x, std::int64_t d) {
    if constexpr (S == RangeShape::per_channel) {
      _mm256_storeu_ps(lo + d, _mm256_min_ps(_mm256_loadu_ps(lo + d), x));
      _mm256_storeu_ps(hi + d, _mm256_max_ps(_mm256_loadu_ps(hi + d), x));
    } else {
      block_lo = _mm256_min_ps(block_lo, x);
      block_hi = _mm256_max_ps(block_hi, x);
    }
  }
  // Four vectors at once: a tree, so the whole-row chain grows by one step per 32 elements.
  void add32(__m256 x0, __m256 x1, __m256 x2, __m256 x3, std::int64_t d) {
    if constexpr (S == RangeShape::per_channel) {
      add8(x0, d);
      add8(x1, d + 8);
      add8(x2, d + 16);
      add8(x3, d + 24);
    } else {
      block_lo = _mm256_min_ps(block_lo, _mm256_min_ps(_mm256_min_ps(x0, x1), _mm256_min_ps(x2, x3)));
      block_hi = _mm256_max_ps(block_hi, _mm256_max_ps(_mm256_max_ps(x0, x1), _mm256_max_ps(x2, x3)));
    }
  }
  void add1(float x, std::int64_t d) {
    if constexpr (S == RangeShape::per_channel) {
      lo[d] = std::fmin(lo[d], x);
      hi[d] = std::fmax(hi[d], x);
    } else {
      // Comparisons instead of fminf/fmaxf (libm calls).
      tail_lo = std::min(tail_lo, x);
      tail_hi = std::max(tail_hi, x);
    }
  }
  void finish() {
    if constexpr (S == RangeShape::whole_row) {
      lo[0] = std::min(lo[0], std::min(horizontal(block_lo, true), tail_lo));
      hi[0] = std::max(hi[0], std::max(horizontal(block_hi, false), tail_hi));
    }
  }
};

// Pass 1 on one row, for one dtype and range shape (both compile-time, so the inner loop has
// no branches). Elements go to the canonical accumulators in chunks of 32 (four vectors), so
// the lane of element d is d mod 32. Returns false if the row holds a NaN or Inf.
template <DType T, RangeShape S>
bool scan_one_row(const void* src, std::int64_t n, float* row, Extremes<S>& extremes, RowStats& st) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    const __m256 x0 = load8_as<T>(src, d), x1 = load8_as<T>(src, d + 8);
    const __m256 x2 = load8_as<T>(src, d + 16), x3 = load8_as<T>(src, d + 24);
    _mm256_storeu_ps(row + d, x0);
    _mm256_storeu_ps(row + d + 8, x1);
    _mm256_storeu_ps(row + d + 16, x2);
    _mm256_storeu_ps(row + d + 24, x3);
    extremes.add32(x0, x1, x2, x3, d);
    a0 = _mm256_add_ps(a0, x0);
    a1 = _mm256_add_ps(a1, x1);
    a2 = _mm256_add_ps(a2, x2);
    a3 = _mm256_add_ps(a3, x3);
  }
  const std::int64_t chunk_start = d;
  for (; d + 8 <= n; d += 8) {
    const __m256 x = load8_as<T>(src, d);
    _mm256_storeu_ps(row + d, x);
    extremes.add8(x, d);
  }
  const ConstTensor view{src, T, 1, n};
  for (; d < n; ++d) {
    row[d] = load_element(view, d);
    extremes.add1(row[d], d);
  }
  // The last n - chunk_start (< 32) elements go to acc[d mod 32] through a zero-padded chunk.
  if (chunk_start < n) add_tail(a0, a1, a2, a3, n - chunk_start, [&](std::int64_t i) { return row[chunk_start + i]; });
  const float sum = reduce_tree(a0, a1, a2, a3);
  // Rule 0 without a test per element: a NaN or Inf makes its accumulator non-finite for good
  // (inf + finite = inf, inf - inf = NaN, NaN stays), and the tree carries that into the sum,
  // so a finite sum proves the row finite.
  if (!std::isfinite(sum) && !all_finite(row, n)) return false;
  st.finite = true;
  st.sum = sum;
  st.sum_squares = canonical_sum_of_squares(row, n, sum / static_cast<float>(n));
  return true;
}

template <DType T, RangeShape S>
std::int64_t scan_rows_as(const void* src, std::int64_t rows, std::int64_t n, float* row, float* lo, float* hi,
                          RowStats* stats) {
  Extremes<S> extremes{lo, hi};
  const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(T);
  for (std::int64_t r = 0; r < rows; ++r) {
    const void* row_src = static_cast<const unsigned char*>(src) + static_cast<std::size_t>(r) * row_bytes;
    if (!scan_one_row<T, S>(row_src, n, row, extremes, stats[r])) {
      extremes.finish();
      return r;
    }
  }
  extremes.finish();
  return rows;
}

template <RangeShape S>
std::int64_t scan_rows_shape(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo,
                             float* hi, RowStats* stats) {
  switch (dt) {
    case DType::f16: return scan_rows_as<DType::f16, S>(src, rows, n, row, lo, hi, stats);
    case DType::bf16: return scan_rows_as<DType::bf16, S>(src, rows, n, row, lo, hi, stats);
    case DType::f32: break;
  }
  return scan_rows_as<DType::f32, S>(src, rows, n, row, lo, hi, stats);
}

// Rule 7 for 8 elements, as int32 q - 127 before saturation. min(253, q) with the constant
// first keeps a NaN q (vminps returns its second operand when one is NaN); cvtps rounds half
// to even in the default mode (rintf) and turns NaN or out-of-range values into INT_MIN. The
// lower clamp is done after packing: INT_MIN and negative q saturate to codes below -127,
// which max(code, -127) maps to -127 exactly as fmaxf(q, 0) does.
template <DType T>
__m256i quantize8(const void* src, std::int64_t d, const float* lo, const float* inv) {
  const __m256 x = load8_as<T>(src, d);
  const __m256 q = _mm256_mul_ps(_mm256_sub_ps(x, _mm256_loadu_ps(lo + d)), _mm256_loadu_ps(inv + d));
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_set1_ps(static_cast<float>(rules::kLevels)), q));
}

template <DType T>
void quantize_one_row(const void* src, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  const __m256i offset16 = _mm256_set1_epi16(rules::kCodeOffset);
  const __m256i lowest = _mm256_set1_epi8(static_cast<char>(rules::kFlatCode));
  std::int64_t d = 0;
  for (; d + 32 <= n; d += 32) {
    // Pack 4 x 8 int32 to 32 int8 (saturating); packs work per 128-bit lane, the permute
    // restores the order.
    const __m256i c01 = _mm256_subs_epi16(
        _mm256_packs_epi32(quantize8<T>(src, d, lo, inv), quantize8<T>(src, d + 8, lo, inv)), offset16);
    const __m256i c23 = _mm256_subs_epi16(
        _mm256_packs_epi32(quantize8<T>(src, d + 16, lo, inv), quantize8<T>(src, d + 24, lo, inv)), offset16);
    const __m256i bytes = _mm256_max_epi8(_mm256_packs_epi16(c01, c23), lowest);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + d), _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; d + 8 <= n; d += 8) {
    const __m256i c = quantize8<T>(src, d, lo, inv);
    const __m128i c16 = _mm_subs_epi16(_mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1)),
                                       _mm256_castsi256_si128(offset16));
    const __m128i c8 = _mm_max_epi8(_mm_packs_epi16(c16, c16), _mm256_castsi256_si128(lowest));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + d), c8);
  }
  const ConstTensor view{src, T, 1, n};
  for (; d < n; ++d) codes[d] = rules::quantize_code(load_element(view, d), lo[d], inv[d]);
}

template <DType T>
void quantize_rows_as(const void* src, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,
                      std::int8_t* codes) {
  const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(T);
  for (std::int64_t r = 0; r < rows; ++r)
    quantize_one_row<T>(static_cast<const unsigned char*>(src) + static_cast<std::size_t>(r) * row_bytes, n, lo, inv,
                        codes + r * n);
}

}  // namespace

std::int64_t scan_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo, float* hi,
                       RangeShape shape, RowStats* stats) {
  return shape == RangeShape::per_channel
             ? scan_rows_shape<RangeShape::per_channel>(src, dt, rows, n, row, lo, hi, stats)
             : scan_rows_shape<RangeShape::whole_row>(src, dt, rows, n, row, lo, hi, stats);
}

RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape) {
  RowStats st;
  if (scan_rows(src, dt, 1, n, row, lo, hi, shape, &st) == 0) st.finite = false;
  return st;
}

void quantize_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,
                   std::int8_t* codes) {
  switch (dt) {
    case DType::f16: return quantize_rows_as<DType::f16>(src, rows, n, lo, inv, codes);
    case DType::bf16: return quantize_rows_as<DType::bf16>(src, rows, n, lo, inv, codes);
    case DType::f32: return quantize_rows_as<DType::f32>(src, rows, n, lo, inv, codes);
  }
}

void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  quantize_rows(src, dt, 1, n, lo, inv, codes);
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
      case DType::f32: _mm256_storeu_ps(static_cast<float*>(out) + d, y); break;
    }
  }
  const MutTensor view{out, dt, 1, n};
  for (; d < n; ++d) store_element(view, d, rules::dequantize_code(codes[d], lo[d], scale[d]));
}

#endif

}  // namespace dgq::cpu::row

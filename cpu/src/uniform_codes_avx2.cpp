// The fast table's uniform-code runs: AVX2, the bytes of the reference's scalar runs
// (reference/src/schemes/uniform_code_runs.cpp).
#include "dgq/kernels/uniform_codes.hpp"
#include "fast_kernels.hpp"

#include "dgq/element_rules.hpp"
#include "dgq/kernels/uniform_nibble_rows.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::codes {
using schemes::MinMax;
using schemes::rule7_code;
using schemes::uniform_code;
namespace {

#if defined(__AVX2__)
// Eight codes as int32: rint((x - lo)*inv) clamped to [0, levels]. _mm256_round_ps with the
// current direction is rint (nearest even by default); max/min with 0 and levels equal the
// scalar comparisons for every non-NaN q (a -0 becomes +0 either way once converted).
__m256i eight_codes(const float* x, __m256 lo, __m256 inv, __m256 top) {
  const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x), lo), inv);
  const __m256 q = _mm256_round_ps(t, _MM_FROUND_CUR_DIRECTION);
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(q, _mm256_setzero_ps()), top));
}

// The low 8 bytes of the packed int32 lanes, in order (values fit: 0..255 unsigned or
// -128..127 signed, chosen by the pack).
__m128i narrow_unsigned(__m256i v) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_packus_epi16(w, w);
}
__m128i narrow_signed(__m256i v) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_packs_epi16(w, w);
}

// Sixteen 4-bit codes (two runs of eight int32 codes, in order) as eight bytes, low nibble
// first: packs keeps the order within each 128-bit lane, the permute restores it across
// lanes, and madd(1, 16) adds each odd code times 16 to the even one below it.
__m128i sixteen_nibbles(__m256i a, __m256i b) {
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
  return narrow_unsigned(_mm256_madd_epi16(w, _mm256_set1_epi32(0x00100001)));
}

// Eight codes as eight_codes gives them, without the rounding instruction: the clamp to
// [0, levels] commutes with rint (levels is an integer), so clamping first and converting
// with the current rounding direction (nearest even) gives the same integers, and every
// clamped value fits int32.
__m256i eight_codes_clamped(__m256 x, __m256 lo, __m256 inv, __m256 top) {
  const __m256 t = _mm256_mul_ps(_mm256_sub_ps(x, lo), inv);
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), top));
}
#endif

// Sixteen codes per AVX2 step, the scalar walk for the tail. The sources add their vector
// loads to the scalar ones (F16C or a shift widens fp16/bf16 exactly).
struct Avx2Walk {
  struct FloatSrc : schemes::nibble_sources::Float {
#if defined(__AVX2__)
    __m256 v(std::int64_t j) const { return _mm256_loadu_ps(p + j); }
#endif
  };
  struct HalfSrc : schemes::nibble_sources::Half {
#if defined(__AVX2__) && defined(__F16C__)
    __m256 v(std::int64_t j) const { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j))); }
#elif defined(__AVX2__)
    __m256 v(std::int64_t j) const {
      alignas(32) float f[8];
      for (int k = 0; k < 8; ++k) f[k] = s(j + k);
      return _mm256_load_ps(f);
    }
#endif
  };
  struct Bf16Src : schemes::nibble_sources::Bf16 {
#if defined(__AVX2__)
    __m256 v(std::int64_t j) const {
      const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j)));
      return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    }
#endif
  };
  struct PerChannel : schemes::nibble_sources::PerChannel {
#if defined(__AVX2__)
    __m256 v(std::int64_t j) const { return _mm256_loadu_ps(p + j); }
#endif
  };
  struct Broadcast : schemes::nibble_sources::Broadcast {
#if defined(__AVX2__)
    __m256 x8 = _mm256_set1_ps(x);
    __m256 v(std::int64_t) const { return x8; }
#endif
  };

  template <class Src, class Lo, class Inv>
  static void nibbles(Src x, std::int64_t n, Lo lo_at, Inv inv_at, int levels, int offset, std::uint8_t* out) {
    std::int64_t j = 0;
#if defined(__AVX2__)
    const __m256 top = _mm256_set1_ps(static_cast<float>(levels));
    const __m256i add = _mm256_set1_epi32(offset);
    for (; j + 16 <= n; j += 16) {
      const __m256i a = _mm256_add_epi32(eight_codes_clamped(x.v(j), lo_at.v(j), inv_at.v(j), top), add);
      const __m256i b = _mm256_add_epi32(eight_codes_clamped(x.v(j + 8), lo_at.v(j + 8), inv_at.v(j + 8), top), add);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j / 2), sixteen_nibbles(a, b));
    }
#endif
    schemes::scalar_nibbles(x, j, n, lo_at, inv_at, levels, offset, out);
  }
};
using Rows = schemes::UniformNibbleRows<Avx2Walk>;

}  // namespace

void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out) {
  Rows::per_channel(x, n, lo, inv, levels, offset, out);
}

void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out) {
  Rows::one_range(x, n, lo, inv, levels, offset, out);
}

void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                         int levels, int offset, std::uint8_t* out) {
  Rows::row(src, dt, n, lo, inv, per_channel, levels, offset, out);
}

MinMax min_max(const float* x, std::int64_t n) {
  MinMax r;
  std::int64_t j = 0;
#if defined(__AVX2__)
  if (n >= 8) {
    // min_ps(a, b) is a < b ? a : b, i.e. MinMax::add per lane; lanes fold at the end.
    __m256 lo = _mm256_loadu_ps(x), hi = lo;
    for (j = 8; j + 8 <= n; j += 8) {
      const __m256 v = _mm256_loadu_ps(x + j);
      lo = _mm256_min_ps(v, lo);
      hi = _mm256_max_ps(v, hi);
    }
    alignas(32) float lows[8], highs[8];
    _mm256_store_ps(lows, lo);
    _mm256_store_ps(highs, hi);
    for (int k = 0; k < 8; ++k) {
      r.add(lows[k]);
      r.add(highs[k]);
    }
  }
#endif
  for (; j < n; ++j) r.add(x[j]);
  return r;
}

void uniform_codes(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q) {
  std::int64_t j = 0;
#if defined(__AVX2__)
  const __m256 lo8 = _mm256_set1_ps(lo), inv8 = _mm256_set1_ps(inv);
  const __m256 top = _mm256_set1_ps(static_cast<float>(levels));
  for (; j + 8 <= n; j += 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + j), narrow_unsigned(eight_codes(x + j, lo8, inv8, top)));
  }
#endif
  for (; j < n; ++j) q[j] = uniform_code(x[j], lo, inv, levels);
}

void uniform_codes_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                               int offset, std::uint8_t* q) {
  std::int64_t j = 0;
#if defined(__AVX2__)
  const __m256 top = _mm256_set1_ps(static_cast<float>(levels));
  const __m256i add = _mm256_set1_epi32(offset);
  for (; j + 8 <= n; j += 8) {
    const __m256i codes =
        _mm256_add_epi32(eight_codes(x + j, _mm256_loadu_ps(lo + j), _mm256_loadu_ps(inv + j), top), add);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + j), narrow_unsigned(codes));
  }
#endif
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo[j], inv[j], levels) + offset);
}

void uniform_codes_offset(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                          std::uint8_t* q) {
  std::int64_t j = 0;
#if defined(__AVX2__)
  const __m256 lo8 = _mm256_set1_ps(lo), inv8 = _mm256_set1_ps(inv);
  const __m256 top = _mm256_set1_ps(static_cast<float>(levels));
  const __m256i add = _mm256_set1_epi32(offset);
  for (; j + 8 <= n; j += 8) {
    const __m256i codes = _mm256_add_epi32(eight_codes(x + j, lo8, inv8, top), add);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + j), narrow_unsigned(codes));
  }
#endif
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo, inv, levels) + offset);
}

void rule7_codes(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q) {
  std::int64_t j = 0;
#if defined(__AVX2__)
  const __m256 lo8 = _mm256_set1_ps(lo), inv8 = _mm256_set1_ps(inv);
  const __m256 top = _mm256_set1_ps(253.0f);
  const __m256i offset = _mm256_set1_epi32(127);
  for (; j + 8 <= n; j += 8) {
    const __m256i codes = _mm256_sub_epi32(eight_codes(x + j, lo8, inv8, top), offset);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + j), narrow_signed(codes));
  }
#endif
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(rule7_code(x[j], lo, inv));
}

}  // namespace dgq::cpu::codes

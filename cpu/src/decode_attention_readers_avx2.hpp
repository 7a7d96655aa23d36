#pragma once
// The AVX2 path's readers of a stored row, one per format (included by decode_attention_chunk.cpp
// only, where the tiles instantiate them): each format's block as 4 registers (dequantize: v[k]
// = elements 8k .. 8k+7, ggml's element order) or as one half of 2 registers (dequantize_half:
// half 0 is elements 0..15, half 1 16..31), with the row's range where the format has ranges.
// Dequantized values are exact products (code x fp16 scale fits fp32's 24 bits) or the
// decompress's fmaf and fp16 rounding, so a value here is bit for bit what the scheme's
// decompress writes.
#include <cstdint>
#include <cstring>

#include "decode_attention_chunk.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kv_block_rules.hpp"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define DGQ_DECODE_ATTENTION_AVX2 1
#endif

#if defined(DGQ_DECODE_ATTENTION_AVX2)
namespace dgq::cpu::attention::avx2 {

inline constexpr int kBlock = 32;

inline std::uint16_t load_scale_bits(const std::uint8_t* block) {
  std::uint16_t d;
  std::memcpy(&d, block, sizeof d);
  return d;
}

// Each format's block as 4 registers (dequantize: v[k] = elements 8k .. 8k+7, ggml's element
// order) or as one half of 2 registers (dequantize_half: half 0 is elements 0..15, half 1
// 16..31; for q4_0 and iq4_nl the low and the high nibbles of the 16 bytes).
// The ggml formats: every block carries its scale, a row nothing else.
struct BlockScaled {
  struct Row {};
  static Row row(const ChunkInput&, bool, std::int64_t) { return {}; }
};

struct Q8_0 : BlockScaled {
  static constexpr int kBytes = 34;
  static void dequantize(const std::uint8_t* b, const Row&, __m256 v[4]) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(load_scale_bits(b)));
    for (int k = 0; k < 4; ++k) {
      const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + 8 * k));
      v[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c)), d);
    }
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row&, __m256 v[2]) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(load_scale_bits(b)));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * half));
    v[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c)), d);
    v[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c, 8))), d);
  }
};

// 16 signed int8 codes times d, to 2 registers.
inline void codes_to_floats(__m128i codes, __m256 d, __m256 v[2]) {
  v[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(codes)), d);
  v[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(codes, 8))), d);
}

inline __m256 block_scale(const std::uint8_t* b) { return _mm256_set1_ps(_cvtsh_ss(load_scale_bits(b))); }

// The low nibbles (elements 0..15) and the high ones (16..31) of a block's 16 bytes.
inline void both_nibbles(const std::uint8_t* b, __m128i& low, __m128i& high) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
  low = _mm_and_si128(raw, _mm_set1_epi8(0x0F));
  high = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F));
}

// The 16 nibbles of a half: the low ones of qs[0..16) for half 0, the high ones for half 1.
inline __m128i nibbles(const std::uint8_t* b, int half) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
  return _mm_and_si128(half == 0 ? raw : _mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F));
}

struct Q4_0 : BlockScaled {
  static constexpr int kBytes = 18;
  static void dequantize(const std::uint8_t* b, const Row&, __m256 v[4]) {
    __m128i low, high;
    both_nibbles(b, low, high);
    const __m256 d = block_scale(b);
    codes_to_floats(_mm_sub_epi8(low, _mm_set1_epi8(8)), d, v);
    codes_to_floats(_mm_sub_epi8(high, _mm_set1_epi8(8)), d, v + 2);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row&, __m256 v[2]) {
    codes_to_floats(_mm_sub_epi8(nibbles(b, half), _mm_set1_epi8(8)), block_scale(b), v);
  }
};

struct IQ4NL : BlockScaled {
  static constexpr int kBytes = 18;
  static __m128i grid() { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kIQ4NLValues)); }
  static void dequantize(const std::uint8_t* b, const Row&, __m256 v[4]) {
    __m128i low, high;
    both_nibbles(b, low, high);
    const __m256 d = block_scale(b);
    codes_to_floats(_mm_shuffle_epi8(grid(), low), d, v);
    codes_to_floats(_mm_shuffle_epi8(grid(), high), d, v + 2);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row&, __m256 v[2]) {
    codes_to_floats(_mm_shuffle_epi8(grid(), nibbles(b, half)), block_scale(b), v);
  }
};

// DGQ v1: 32 int8 codes per block, the row's range from its segment (granularity=segment: one
// lo and scale, broadcast; segment-channel: one per channel, loaded beside the codes; a block's
// first channel is its offset in the row, one byte a code). fmadd is rule 7's fmaf; cvtps_ph
// rounds to nearest even as rules::float_to_half does; codes clamped to [-127, 126] are rule
// 8's inband_unmark (only markers lie outside).
struct Dgq {
  static constexpr int kBytes = 32;
  struct Row {
    __m256 lo, scale;                 // broadcast (one range per segment)
    const float *lo_row, *scale_row;  // per channel (segment-channel)
    const std::uint8_t* codes;        // the row's first code
    bool per_channel, f16;
  };
  static Row row(const ChunkInput& in, bool value, std::int64_t t) {
    const float* lo = (value ? in.v_lo : in.k_lo)[t];
    const float* scale = (value ? in.v_scale : in.k_scale)[t];
    const int channels = value ? in.v_range_channels : in.k_range_channels;
    return {_mm256_set1_ps(lo[0]),
            _mm256_set1_ps(scale[0]),
            lo,
            scale,
            (value ? in.v : in.k) + t * in.row_bytes(value),
            channels != 1,
            in.f16(value)};
  }
  static __m128i unmarked(const std::uint8_t* p) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm_min_epi8(_mm_max_epi8(c, _mm_set1_epi8(-127)), _mm_set1_epi8(126));
  }
  // The values of the low eight codes of c, channels first .. first+7.
  static __m256 eight(__m128i c, const Row& r, std::ptrdiff_t first) {
    const __m256 lo = r.per_channel ? _mm256_loadu_ps(r.lo_row + first) : r.lo;
    const __m256 scale = r.per_channel ? _mm256_loadu_ps(r.scale_row + first) : r.scale;
    const __m256i q = _mm256_add_epi32(_mm256_cvtepi8_epi32(c), _mm256_set1_epi32(127));
    const __m256 x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), scale, lo);
    return r.f16 ? _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)) : x;
  }
  static void dequantize(const std::uint8_t* b, const Row& r, __m256 v[4]) {
    const std::ptrdiff_t first = b - r.codes;
    const __m128i low = unmarked(b), high = unmarked(b + 16);
    v[0] = eight(low, r, first);
    v[1] = eight(_mm_srli_si128(low, 8), r, first + 8);
    v[2] = eight(high, r, first + 16);
    v[3] = eight(_mm_srli_si128(high, 8), r, first + 24);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row& r, __m256 v[2]) {
    const std::ptrdiff_t first = b - r.codes + 16 * half;
    const __m128i c = unmarked(b + 16 * half);
    v[0] = eight(c, r, first);
    v[1] = eight(_mm_srli_si128(c, 8), r, first + 8);
  }
};

// Unsigned codes of Bits bits (2, 3, 4, 8) in a row's bit stream (dgq2, KIVI, TurboQuant) as
// int32 lanes. Eight consecutive codes are Bits whole bytes. 4-bit codes are split into nibbles
// and interleaved (code 2j is byte j's low nibble), 8-bit ones widened; 2- and 3-bit ones are
// broadcast as one word and shifted apart per lane (srlv).
template <int Bits>
struct PackedCodes {
  // Codes first .. first+7 at p (the byte of code `first`, a multiple of 8).
  static __m256i eight(const std::uint8_t* p) {
    if constexpr (Bits == 8) {
      return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    } else {
      // Bits bytes, never past the row, assembled in registers (a 3-byte memcpy into a word went
      // through the stack: a store-forwarding stall per 8 codes, 4x slower at 3 bits, perf).
      std::uint32_t word;
      if constexpr (Bits == 4) {
        std::memcpy(&word, p, 4);
      } else {
        std::uint16_t low;
        std::memcpy(&low, p, 2);
        word = Bits == 3 ? low | static_cast<std::uint32_t>(p[2]) << 16 : low;
      }
      const __m256i shifts = _mm256_setr_epi32(0, Bits, 2 * Bits, 3 * Bits, 4 * Bits, 5 * Bits, 6 * Bits, 7 * Bits);
      return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(word)), shifts),
                              _mm256_set1_epi32((1 << Bits) - 1));
    }
  }
  // 16 nibbles of 8 bytes in code order: each byte's low nibble, then its high one.
  static __m128i nibbles16(__m128i raw) {
    const __m128i low = _mm_and_si128(raw, _mm_set1_epi8(0x0F));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F));
    return _mm_unpacklo_epi8(low, high);
  }
  // The 32 codes of the block at b: c[k] holds codes 8k .. 8k+7.
  static void block(const std::uint8_t* b, __m256i c[4]) {
    if constexpr (Bits == 4) {
      const __m128i first = nibbles16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
      const __m128i second = nibbles16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 8)));
      c[0] = _mm256_cvtepu8_epi32(first);
      c[1] = _mm256_cvtepu8_epi32(_mm_srli_si128(first, 8));
      c[2] = _mm256_cvtepu8_epi32(second);
      c[3] = _mm256_cvtepu8_epi32(_mm_srli_si128(second, 8));
    } else {
      for (int k = 0; k < 4; ++k) c[k] = eight(b + k * Bits);
    }
  }
  // Codes 16 half .. 16 half + 15 of the block at b.
  static void half(const std::uint8_t* b, int h, __m256i c[2]) {
    if constexpr (Bits == 4) {
      const __m128i codes = nibbles16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 8 * h)));
      c[0] = _mm256_cvtepu8_epi32(codes);
      c[1] = _mm256_cvtepu8_epi32(_mm_srli_si128(codes, 8));
    } else {
      c[0] = eight(b + 2 * h * Bits);
      c[1] = eight(b + (2 * h + 1) * Bits);
    }
  }
};

// dgq2's and KIVI's codes with the row's range as Dgq's (one per span, or one per span and
// channel, loaded beside the codes): fmadd is rule V5's fmaf, cvtps_ph rounds to fp16 as the
// decompress does. The path for per-channel ranges and 8-bit codes; a role with one range per
// token and at most 4 bits goes through TokenLevels.
template <int Bits>
struct Uniform {
  static constexpr int kBytes = 4 * Bits;
  using Row = Dgq::Row;
  static Row row(const ChunkInput& in, bool value, std::int64_t t) {
    return Dgq::row(in, value, t);  // the row's first code at the role's row stride
  }
  static __m256 value(__m256i code, const Row& r, std::ptrdiff_t first) {
    const __m256 lo = r.per_channel ? _mm256_loadu_ps(r.lo_row + first) : r.lo;
    const __m256 scale = r.per_channel ? _mm256_loadu_ps(r.scale_row + first) : r.scale;
    const __m256 x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(code), scale, lo);
    return r.f16 ? _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)) : x;
  }
  // b: the block's first byte; its first channel is 32 x (its block index in the row).
  static void dequantize(const std::uint8_t* b, const Row& r, __m256 v[4]) {
    const std::ptrdiff_t first = (b - r.codes) / kBytes * kBlock;
    __m256i c[4];
    PackedCodes<Bits>::block(b, c);
    for (int k = 0; k < 4; ++k) v[k] = value(c[k], r, first + 8 * k);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row& r, __m256 v[2]) {
    const std::ptrdiff_t first = (b - r.codes) / kBytes * kBlock + 16 * half;
    __m256i c[2];
    PackedCodes<Bits>::half(b, half, c);
    v[0] = value(c[0], r, first);
    v[1] = value(c[1], r, first + 8);
  }
};

// A role whose tokens each have at most 16 values (codes of at most 4 bits with one range per
// token: dgq2's `token` roles, KIVI's values; TurboQuant's codebook times the token's norm):
// the chunk's tokens' values are tabulated once (token_levels below: the same fmadd and
// rounding as Uniform, or codebook_value's product) and a code picks its value from two
// registers by permutevar (bit 3 of a 4-bit code chooses the register).
template <int Bits>
struct TokenLevels {
  static constexpr int kBytes = 4 * Bits;
  struct Row {
    __m256 low, high;  // the token's values of codes 0..7 and 8..15
  };
  static Row row(const ChunkInput& in, bool value, std::int64_t t) {
    const float* levels = (value ? in.v_token_levels : in.k_token_levels) + t * 16;
    return {_mm256_loadu_ps(levels), _mm256_loadu_ps(levels + 8)};
  }
  static __m256 value(__m256i code, const Row& r) {
    const __m256 level = _mm256_permutevar8x32_ps(r.low, code);
    if constexpr (Bits < 4) return level;
    return _mm256_blendv_ps(level, _mm256_permutevar8x32_ps(r.high, code),
                            _mm256_castsi256_ps(_mm256_slli_epi32(code, 28)));
  }
  static void dequantize(const std::uint8_t* b, const Row& r, __m256 v[4]) {
    __m256i c[4];
    PackedCodes<Bits>::block(b, c);
    for (int k = 0; k < 4; ++k) v[k] = value(c[k], r);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row& r, __m256 v[2]) {
    __m256i c[2];
    PackedCodes<Bits>::half(b, half, c);
    v[0] = value(c[0], r);
    v[1] = value(c[1], r);
  }
};

// Raw rows (StoredKv::k_raw): 32 values per "block" in the input dtype, fp16 widened exactly by
// F16C, fp32 as stored; no range (a row nothing, as the ggml blocks').
struct RawF16 : BlockScaled {
  static constexpr int kBytes = 64;
  static void dequantize(const std::uint8_t* b, const Row&, __m256 v[4]) {
    for (int k = 0; k < 4; ++k) v[k] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k)));
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row&, __m256 v[2]) {
    const std::uint8_t* p = b + 32 * half;
    v[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    v[1] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
  }
};
struct RawF32 : BlockScaled {
  static constexpr int kBytes = 128;
  static void dequantize(const std::uint8_t* b, const Row&, __m256 v[4]) {
    for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(b) + 8 * k);
  }
  static void dequantize_half(const std::uint8_t* b, int half, const Row&, __m256 v[2]) {
    const float* p = reinterpret_cast<const float*>(b) + 16 * half;
    v[0] = _mm256_loadu_ps(p);
    v[1] = _mm256_loadu_ps(p + 8);
  }
};

// Whether a role's values go through TokenLevels: a codebook, or uniform codes of at most 4 bits
// with one range per token.
inline bool tabulated(const ChunkInput& in, bool value) {
  const auto f = static_cast<StoredFormat>(value ? in.v_format : in.format);
  if (kv_block_rules::is_codebook(f)) return true;
  const int bits = kv_block_rules::uniform_bits(f);
  return bits != 0 && bits <= 4 && (value ? in.v_range_channels : in.k_range_channels) == 1;
}

// The chunk's values per token and code (16 per token) for a tabulated role.
inline void token_levels(const ChunkInput& in, bool value, float* out) {
  const auto f = static_cast<StoredFormat>(value ? in.v_format : in.format);
  const __m256 codes_low = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 codes_high = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
  const float* const* lo = value ? in.v_lo : in.k_lo;
  const float* const* scale = value ? in.v_scale : in.k_scale;
  for (std::int64_t t = 0; t < in.codes_end(value); ++t, out += 16) {  // raw rows have no range
    const __m256 s = _mm256_set1_ps(scale[t][0]);
    if (kv_block_rules::is_codebook(f)) {
      const float* levels = value ? in.v_codebook : in.k_codebook;  // padded to 16
      _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_loadu_ps(levels), s));
      _mm256_storeu_ps(out + 8, _mm256_mul_ps(_mm256_loadu_ps(levels + 8), s));
      continue;
    }
    const Dgq::Row r{_mm256_set1_ps(lo[t][0]), s, nullptr, nullptr, nullptr, false, in.f16(value)};
    _mm256_storeu_ps(out, Uniform<4>::value(_mm256_cvtps_epi32(codes_low), r, 0));
    _mm256_storeu_ps(out + 8, Uniform<4>::value(_mm256_cvtps_epi32(codes_high), r, 0));
  }
}

}  // namespace dgq::cpu::attention::avx2
#endif

// The chunk of a decode step: AVX2/FMA with the blocks dequantized in registers, and the scalar
// path of the same order (non-AVX2 builds, and DecodeAttention's Isa::scalar for the tests).
// Dequantized values are exact products (code x fp16 scale fits fp32's 24 bits), so a value
// here is bit for bit what the scheme's decompress writes; the order of the sums is
// dgq/attention_rules.hpp's, so both paths give the same bits.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include "decode_attention_chunk.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kv_block_rules.hpp"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define DGQ_DECODE_ATTENTION_AVX2 1
#endif

namespace dgq::cpu::attention {
namespace ar = dgq::attention_rules;
namespace {

constexpr int kBlock = 32;

[[maybe_unused]] std::uint16_t load_scale_bits(const std::uint8_t* block) {
  std::uint16_t d;
  std::memcpy(&d, block, sizeof d);
  return d;
}

// ---- The scalar path ---------------------------------------------------------------------

void dequantize_block_scalar(StoredFormat f, const std::uint8_t* block, float* out) {
  switch (f) {
    case StoredFormat::q8_0: {
      q8_0::Block b;
      std::memcpy(&b, block, sizeof b);
      return q8_0::dequantize_block(b, kBlock, out);
    }
    case StoredFormat::q4_0: {
      ggml::BlockQ4_0 b;
      std::memcpy(&b, block, sizeof b);
      return ggml::dequantize_q4_0(b, out);
    }
    case StoredFormat::iq4_nl: {
      ggml::BlockIQ4NL b;
      std::memcpy(&b, block, sizeof b);
      return ggml::dequantize_iq4_nl(b, out);
    }
    default: break;  // no block scale: dequantize_dgq_row_scalar, dequantize_uniform_row_scalar
  }
  assert(false);
}

// DGQ v1's row (rule 7, in-band markers unmarked as rule 8 does), rounded to fp16 when asked.
void dequantize_dgq_row_scalar(const std::uint8_t* row, int head_dim, const float* lo, const float* scale,
                               int range_channels, bool f16, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    const int c = range_channels == 1 ? 0 : d;
    out[d] = kv_block_rules::dgq_value(row[d], lo[c], scale[c], f16);
  }
}

// A row of dgq2's or KIVI's b-bit codes (rule V5's value), rounded to fp16 when asked.
void dequantize_uniform_row_scalar(const std::uint8_t* row, int bits, int head_dim, const float* lo, const float* scale,
                                   int range_channels, bool f16, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    const int c = range_channels == 1 ? 0 : d;
    out[d] = kv_block_rules::uniform_value(kv_block_rules::uniform_code(row, d, bits), lo[c], scale[c], f16);
  }
}

// A raw row (fp16 widened exactly, or fp32 as stored).
void raw_row_scalar(const std::uint8_t* row, bool f16, int head_dim, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    if (f16) {
      std::uint16_t h;
      std::memcpy(&h, row + 2 * d, 2);
      out[d] = rules::half_to_float(h);
    } else {
      std::memcpy(out + d, row + 4 * d, 4);
    }
  }
}

// Row t of the chunk's K (value = false) or V.
void dequantize_row_scalar(const ChunkInput& in, bool value, std::int64_t t, float* out) {
  if (const std::int64_t raw_from = value ? in.v_raw_from : in.k_raw_from; t >= raw_from) {
    const std::int64_t raw_row_bytes = static_cast<std::int64_t>(in.head_dim) * (in.raw_f16 ? 2 : 4);
    return raw_row_scalar((value ? in.v_raw : in.k_raw) + (t - raw_from) * raw_row_bytes, in.raw_f16, in.head_dim, out);
  }
  const StoredFormat f = value ? in.v_format : in.format;
  const std::uint8_t* row = (value ? in.v : in.k) + t * in.row_bytes(value);
  const float* lo = kv_format_has_ranges(f) ? (value ? in.v_lo : in.k_lo)[t] : nullptr;
  const float* scale = kv_format_has_ranges(f) ? (value ? in.v_scale : in.k_scale)[t] : nullptr;
  const int channels = value ? in.v_range_channels : in.k_range_channels;
  if (f == StoredFormat::dgq) return dequantize_dgq_row_scalar(row, in.head_dim, lo, scale, channels, in.f16(value), out);
  const auto rf = static_cast<StoredFormat>(f);
  if (kv_block_rules::is_codebook(rf)) {
    const float* levels = value ? in.v_codebook : in.k_codebook;
    for (int d = 0; d < in.head_dim; ++d)
      out[d] = kv_block_rules::codebook_value(levels[kv_block_rules::uniform_code(row, d, kv_block_rules::uniform_bits(rf))], scale[0]);
    return;
  }
  if (const int bits = kv_block_rules::uniform_bits(rf); bits != 0)
    return dequantize_uniform_row_scalar(row, bits, in.head_dim, lo, scale, channels, in.f16(value), out);
  for (int b = 0; b < in.head_dim / kBlock; ++b) dequantize_block_scalar(f, row + b * kv_block_bytes(f), out + b * kBlock);
}

float dot_scalar(const float* q, const float* k, int head_dim) {
  float acc[ar::kDotAccumulators][ar::kDotLanes] = {};
  for (int d = 0; d < head_dim; ++d) {
    float& a = acc[(d / ar::kDotLanes) % ar::kDotAccumulators][d % ar::kDotLanes];
    a = std::fma(q[d], k[d], a);
  }
  float lanes[ar::kDotLanes];
  static_assert(ar::kDotAccumulators == 2, "the pairwise sum below is written for two accumulators");
  for (int j = 0; j < ar::kDotLanes; ++j) lanes[j] = acc[0][j] + acc[1][j];
  return ar::lane_tree_sum8(lanes);
}

void attend_chunk_scalar(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  const int D = in.head_dim;
  std::vector<float> x(static_cast<std::size_t>(D));
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    dequantize_row_scalar(in, false, t, x.data());
    for (int h = 0; h < in.group; ++h) scores[h * ar::kChunkTokens + t] = dot_scalar(in.q + h * D, x.data(), D) * in.scale;
  }
  for (int h = 0; h < in.group; ++h) {
    float* s = scores + h * ar::kChunkTokens;
    const float m = *std::max_element(s, s + in.tokens);
    float lanes[ar::kDotLanes] = {};
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      s[t] = ar::softmax_exp(s[t] - m);
      lanes[t % ar::kDotLanes] += s[t];
    }
    out.max[h] = m;
    out.sum[h] = ar::lane_tree_sum8(lanes);
    std::fill(out.acc + h * D, out.acc + (h + 1) * D, 0.0f);
  }
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    dequantize_row_scalar(in, true, t, x.data());
    for (int h = 0; h < in.group; ++h) {
      const float p = scores[h * ar::kChunkTokens + t];
      float* acc = out.acc + h * D;
      for (int d = 0; d < D; ++d) acc[d] = std::fma(p, x[d], acc[d]);
    }
  }
}

// ---- The AVX2 path -----------------------------------------------------------------------
#if defined(DGQ_DECODE_ATTENTION_AVX2)

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
    __m256 lo, scale;               // broadcast (one range per segment)
    const float *lo_row, *scale_row;  // per channel (segment-channel)
    const std::uint8_t* codes;      // the row's first code
    bool per_channel, f16;
  };
  static Row row(const ChunkInput& in, bool value, std::int64_t t) {
    const float* lo = (value ? in.v_lo : in.k_lo)[t];
    const float* scale = (value ? in.v_scale : in.k_scale)[t];
    const int channels = value ? in.v_range_channels : in.k_range_channels;
    return {_mm256_set1_ps(lo[0]), _mm256_set1_ps(scale[0]), lo, scale, (value ? in.v : in.k) + t * in.row_bytes(value),
            channels != 1, in.f16(value)};
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
    return _mm256_blendv_ps(level, _mm256_permutevar8x32_ps(r.high, code), _mm256_castsi256_ps(_mm256_slli_epi32(code, 28)));
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
bool tabulated(const ChunkInput& in, bool value) {
  const auto f = static_cast<StoredFormat>(value ? in.v_format : in.format);
  if (kv_block_rules::is_codebook(f)) return true;
  const int bits = kv_block_rules::uniform_bits(f);
  return bits != 0 && bits <= 4 && (value ? in.v_range_channels : in.k_range_channels) == 1;
}

// The chunk's values per token and code (16 per token) for a tabulated role.
void token_levels(const ChunkInput& in, bool value, float* out) {
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

// lane_tree_sum8 of a register: the halving reduction the rule is written after.
inline float lane_tree_sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// ar::softmax_exp on 8 lanes, the same operations in the same order.
inline __m256 softmax_exp8(__m256 x) {
  const __m256 in_range = _mm256_cmp_ps(x, _mm256_set1_ps(ar::kExpFloor), _CMP_GE_OQ);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(ar::kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-ar::kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-ar::kLn2Lo), r);
  __m256 p = _mm256_set1_ps(ar::exp_poly(0));
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ar::exp_poly(i)));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(exponent)), in_range);
}

// Scores of query heads h0 .. h0+H-1 (H <= 4) for chunk tokens [first, last), whose K rows of
// format F start at rows (token first's), row_bytes apart: each K block dequantized once for the H heads; its
// register k holds elements 8k.. of accumulator k % 2 = (d / 8) % 2.
template <class F, int H>
void score_heads(const ChunkInput& in, int h0, const std::uint8_t* rows, std::int64_t row_bytes, std::int64_t first,
                 std::int64_t last, float* scores) {
  const int D = in.head_dim, blocks = D / kBlock;
  const std::int64_t v_codes_bytes = static_cast<std::int64_t>(blocks) * kv_block_bytes(in.v_format);  // of a V row
  for (std::int64_t t = first; t < last; ++t) {
    const std::uint8_t* row = rows + (t - first) * row_bytes;
    // V's row t, into L2 while K streams: the V passes walk rows at a stride of row_bytes,
    // which the hardware prefetcher does not follow (a stall on every row, measured with perf
    // at head_dim 256). Data movement only: no bit changes.
    if (h0 == 0 && t < in.codes_end(true))
      for (std::int64_t offset = 0; offset < v_codes_bytes; offset += 64)
        _mm_prefetch(reinterpret_cast<const char*>(in.v + t * in.v_row_bytes + offset), _MM_HINT_T1);
    __m256 acc[H][2];
    for (int h = 0; h < H; ++h) acc[h][0] = acc[h][1] = _mm256_setzero_ps();
    const typename F::Row range = F::row(in, false, t);
    for (int b = 0; b < blocks; ++b) {
      __m256 kv[4];
      F::dequantize(row + b * F::kBytes, range, kv);
      for (int h = 0; h < H; ++h) {
        const float* q = in.q + (h0 + h) * D + b * kBlock;
        for (int k = 0; k < 4; ++k) acc[h][k % 2] = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * k), kv[k], acc[h][k % 2]);
      }
    }
    for (int h = 0; h < H; ++h)
      scores[(h0 + h) * ar::kChunkTokens + t] = lane_tree_sum8(_mm256_add_ps(acc[h][0], acc[h][1])) * in.scale;
  }
}

// Turns head h's scores into p_t in place (padded with -inf to a multiple of 8, which gives 0
// weights that leave the lane sums unchanged) and sets its max and sum.
void softmax_head(const ChunkInput& in, int h, const ChunkOutput& out, float* scores) {
  float* s = scores + h * ar::kChunkTokens;
  const std::int64_t padded = (in.tokens + 7) / 8 * 8;
  std::fill(s + in.tokens, s + padded, -INFINITY);
  __m256 running = _mm256_set1_ps(-INFINITY);  // the max is exact in any order
  for (std::int64_t t = 0; t < padded; t += 8) running = _mm256_max_ps(running, _mm256_loadu_ps(s + t));
  alignas(32) float lanes_max[8];
  _mm256_store_ps(lanes_max, running);
  const float m = *std::max_element(lanes_max, lanes_max + 8);
  const __m256 vm = _mm256_set1_ps(m);
  __m256 lanes = _mm256_setzero_ps();
  for (std::int64_t t = 0; t < padded; t += 8) {
    const __m256 p = softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(s + t), vm));
    _mm256_storeu_ps(s + t, p);
    lanes = _mm256_add_ps(lanes, p);
  }
  out.max[h] = m;
  out.sum[h] = lane_tree_sum8(lanes);
}

// V is walked in tiles of this many tokens, every channel of a tile before the next tile, so
// that a tile's rows stay in L1 while each half-block pass re-reads them (a whole chunk of
// q8_0 rows at head_dim 256 is 70 KB). The accumulators go through out.acc between tiles;
// each still adds its tokens in order, so the tiling changes no bit.
constexpr std::int64_t kValueTileTokens = 64;

// acc of query heads h0 .. h0+H-1 (H <= 4) over channels [16 * half_block, + 16) and tokens
// [first, last), whose V rows of format F start at rows (token rows_first's), row_bytes apart: the 2H
// accumulators in registers, each V half-block dequantized once for the H heads. first == 0
// starts from zero, a later tile from what the previous one stored.
template <class F, int H>
void accumulate_half_block(const ChunkInput& in, int h0, int half_block, const std::uint8_t* rows,
                           std::int64_t row_bytes, std::int64_t rows_first, std::int64_t first, std::int64_t last,
                           const ChunkOutput& out, const float* p) {
  const std::uint8_t* block = rows + (first - rows_first) * row_bytes + (half_block / 2) * F::kBytes;
  const int half = half_block % 2;
  __m256 acc[H][2];
  for (int h = 0; h < H; ++h) {
    const float* o = out.acc + (h0 + h) * in.head_dim + 16 * half_block;
    acc[h][0] = first == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(o);
    acc[h][1] = first == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(o + 8);
  }
  for (std::int64_t t = first; t < last; ++t, block += row_bytes) {
    __m256 vv[2];
    F::dequantize_half(block, half, F::row(in, true, t), vv);
    for (int h = 0; h < H; ++h) {
      const __m256 w = _mm256_broadcast_ss(p + (h0 + h) * ar::kChunkTokens + t);
      acc[h][0] = _mm256_fmadd_ps(w, vv[0], acc[h][0]);
      acc[h][1] = _mm256_fmadd_ps(w, vv[1], acc[h][1]);
    }
  }
  for (int h = 0; h < H; ++h) {
    float* o = out.acc + (h0 + h) * in.head_dim + 16 * half_block;
    _mm256_storeu_ps(o, acc[h][0]);
    _mm256_storeu_ps(o + 8, acc[h][1]);
  }
}

// Query heads in tiles of 4 (then 2, then 1): 8 accumulators + the dequantized registers fit
// AVX2's 16.
template <class F, template <class, int> class Tile, class... Args>
void over_head_tiles(int group, Args&&... args) {
  int h = 0;
  for (; h + 4 <= group; h += 4) Tile<F, 4>::run(h, args...);
  if (h + 2 <= group) {
    Tile<F, 2>::run(h, args...);
    h += 2;
  }
  if (h < group) Tile<F, 1>::run(h, args...);
}

template <class F, int H>
struct ScoreTile {
  static void run(int h0, const ChunkInput& in, const std::uint8_t* rows, std::int64_t row_bytes, std::int64_t first,
                  std::int64_t last, float* scores) {
    score_heads<F, H>(in, h0, rows, row_bytes, first, last, scores);
  }
};

template <class F, int H>
struct AccumulateTile {
  static void run(int h0, const ChunkInput& in, const std::uint8_t* rows, std::int64_t row_bytes, int half_block,
                  std::int64_t rows_first, std::int64_t first, std::int64_t last, const ChunkOutput& out, const float* p) {
    accumulate_half_block<F, H>(in, h0, half_block, rows, row_bytes, rows_first, first, last, out, p);
  }
};

// The raw rows' format: RawF16 or RawF32 as the input dtype was, rows packed; `rows` is the
// first argument after the tile's own.
template <template <class, int> class Tile, class... Args>
void over_raw_head_tiles(const ChunkInput& in, const std::uint8_t* rows, Args&&... args) {
  const std::int64_t blocks = in.head_dim / kBlock;
  if (in.raw_f16) return over_head_tiles<RawF16, Tile>(in.group, in, rows, blocks * RawF16::kBytes, args...);
  over_head_tiles<RawF32, Tile>(in.group, in, rows, blocks * RawF32::kBytes, args...);
}

// Every token in order, its row from the codes or (from k_raw_from / v_raw_from on) raw: the
// same sums in the same order whichever a token's row comes from.
template <class FK, class FV>
void attend_chunk_avx2(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  const std::int64_t k_codes = in.codes_end(false), v_codes = in.codes_end(true);
  if (k_codes > 0) over_head_tiles<FK, ScoreTile>(in.group, in, in.k, in.k_row_bytes, std::int64_t{0}, k_codes, scores);
  if (k_codes < in.tokens) over_raw_head_tiles<ScoreTile>(in, in.k_raw, k_codes, in.tokens, scores);
  for (int g = 0; g < in.group; ++g) softmax_head(in, g, out, scores);
  const float* p = scores;
  for (std::int64_t first = 0; first < in.tokens; first += kValueTileTokens) {
    const std::int64_t last = std::min(in.tokens, first + kValueTileTokens);
    const std::int64_t split = std::clamp(v_codes, first, last);
    for (int half_block = 0; half_block < 2 * (in.head_dim / kBlock); ++half_block) {
      if (first < split)
        over_head_tiles<FV, AccumulateTile>(in.group, in, in.v, in.v_row_bytes, half_block, std::int64_t{0}, first, split,
                                            out, p);
      if (split < last) over_raw_head_tiles<AccumulateTile>(in, in.v_raw, half_block, v_codes, split, last, out, p);
    }
  }
}

// The role's path among the uniform and codebook formats: Uniform<b>, or TokenLevels<b> where
// tabulated() holds.
enum class CodesPath { uniform2, uniform3, uniform4, uniform8, levels2, levels3, levels4 };
CodesPath codes_path(const ChunkInput& in, bool value) {
  const int bits = kv_block_rules::uniform_bits(value ? in.v_format : in.format);
  if (tabulated(in, value)) return bits == 2 ? CodesPath::levels2 : bits == 3 ? CodesPath::levels3 : CodesPath::levels4;
  return bits == 2 ? CodesPath::uniform2 : bits == 3 ? CodesPath::uniform3 : bits == 4 ? CodesPath::uniform4 : CodesPath::uniform8;
}

// K's path chosen, V's: any (dgq2's kbits and vbits, each role's granularity).
template <class FK>
void attend_codes_avx2(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  switch (codes_path(in, true)) {
    case CodesPath::uniform2: return attend_chunk_avx2<FK, Uniform<2>>(in, out, scores);
    case CodesPath::uniform3: return attend_chunk_avx2<FK, Uniform<3>>(in, out, scores);
    case CodesPath::uniform4: return attend_chunk_avx2<FK, Uniform<4>>(in, out, scores);
    case CodesPath::uniform8: return attend_chunk_avx2<FK, Uniform<8>>(in, out, scores);
    case CodesPath::levels2: return attend_chunk_avx2<FK, TokenLevels<2>>(in, out, scores);
    case CodesPath::levels3: return attend_chunk_avx2<FK, TokenLevels<3>>(in, out, scores);
    case CodesPath::levels4: return attend_chunk_avx2<FK, TokenLevels<4>>(in, out, scores);
  }
}

// The uniform and codebook formats: each tabulated role's values first, then K's path.
void attend_codes_avx2(const ChunkInput& given, const ChunkOutput& out, float* scores) {
  thread_local std::vector<float> k_levels, v_levels;
  ChunkInput in = given;
  for (const bool value : {false, true}) {
    if (!tabulated(in, value)) continue;
    std::vector<float>& levels = value ? v_levels : k_levels;
    levels.resize(static_cast<std::size_t>(ar::kChunkTokens) * 16);
    token_levels(in, value, levels.data());
    (value ? in.v_token_levels : in.k_token_levels) = levels.data();
  }
  switch (codes_path(in, false)) {
    case CodesPath::uniform2: return attend_codes_avx2<Uniform<2>>(in, out, scores);
    case CodesPath::uniform3: return attend_codes_avx2<Uniform<3>>(in, out, scores);
    case CodesPath::uniform4: return attend_codes_avx2<Uniform<4>>(in, out, scores);
    case CodesPath::uniform8: return attend_codes_avx2<Uniform<8>>(in, out, scores);
    case CodesPath::levels2: return attend_codes_avx2<TokenLevels<2>>(in, out, scores);
    case CodesPath::levels3: return attend_codes_avx2<TokenLevels<3>>(in, out, scores);
    case CodesPath::levels4: return attend_codes_avx2<TokenLevels<4>>(in, out, scores);
  }
}
#endif

}  // namespace

bool vectorized_path_compiled() {
#if defined(DGQ_DECODE_ATTENTION_AVX2)
  return true;
#else
  return false;
#endif
}

void attend_chunk(const ChunkInput& in, const ChunkOutput& out, float* scores, [[maybe_unused]] bool scalar) {
  assert(in.tokens >= 1 && in.tokens <= ar::kChunkTokens && in.head_dim % kBlock == 0);
#if defined(DGQ_DECODE_ATTENTION_AVX2)
  if (!scalar) {
    switch (in.format) {
      // K and V share a format but for uniform widths (DecodeAttention checks it).
      case StoredFormat::q8_0: return attend_chunk_avx2<Q8_0, Q8_0>(in, out, scores);
      case StoredFormat::q4_0: return attend_chunk_avx2<Q4_0, Q4_0>(in, out, scores);
      case StoredFormat::iq4_nl: return attend_chunk_avx2<IQ4NL, IQ4NL>(in, out, scores);
      case StoredFormat::dgq: return attend_chunk_avx2<Dgq, Dgq>(in, out, scores);
      default: return attend_codes_avx2(in, out, scores);  // uniform and codebook formats
    }
  }
#endif
  attend_chunk_scalar(in, out, scores);
}

}  // namespace dgq::cpu::attention

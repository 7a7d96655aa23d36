// q4_0, q4_1, q5_0, q5_1: ggml's quantize_row_*_ref and dequantize_row_* (ggml-quants.c),
// which the CPU backend's from_float/to_float call for these types. The arithmetic is kept
// exactly as ggml writes it (fp32, no fma; float->int conversions truncate toward zero), so
// the bytes match ggml's: the "+ 8.5 then truncate" is ggml's rounding, not round-to-nearest.
#include <cmath>
#include <cstring>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/element_rules.hpp"

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

namespace dgq::ggml {
namespace {

// fp32 -> fp16 bits, nearest even, for the stored fields: F16C's conversion when compiled in
// (the bits of rules::float_to_half, subnormals and overflow to inf included).
inline std::uint16_t half_bits(float v) {
#if defined(__F16C__)
  return static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  return rules::float_to_half(v);
#endif
}

// A stored fp16 field as fp32: F16C's exact conversion when compiled in (one instruction per
// block instead of the portable bit manipulation), rules::half_to_float otherwise.
inline float half_value(std::uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return rules::half_to_float(h);
#endif
}

constexpr int kHalf = kBlockValues / 2;

// The signed value of largest magnitude, the first one on ties (ggml: `if (amax < fabsf(v))`).
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float& min, float& max) {
  min = 3.402823466e+38f;  // FLT_MAX
  max = -3.402823466e+38f;
  for (int j = 0; j < kBlockValues; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
}

bool finite_half(std::uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

// Symmetric codes of q4_0 (bits 4) and q5_0 (bits 5): d = max / -2^(bits-1), code =
// min(2^bits - 1, (int8)(x/d + 2^(bits-1) + 0.5)). Writes d and the 32 codes.
template <int Bits>
std::uint16_t symmetric_codes(const float* x, std::uint8_t* codes) {
  constexpr float kOffset = static_cast<float>(1 << (Bits - 1));
  constexpr int kTop = (1 << Bits) - 1;
  const float d = signed_absmax(x) / -kOffset;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    const int q = static_cast<std::int8_t>(x[j] * id + (kOffset + 0.5f));
    codes[j] = static_cast<std::uint8_t>(q < kTop ? q : kTop);
  }
  return half_bits(d);
}

// Element j's code in the low nibble of qs[j], element j+16's in the high nibble.
void pack_nibbles(const std::uint8_t* codes, std::uint8_t* qs) {
  for (int j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<std::uint8_t>((codes[j] & 0x0f) | ((codes[j + kHalf] & 0x0f) << 4));
  }
}

// Bit 4 of element j's code at bit j of a little-endian uint32.
void pack_high_bits(const std::uint8_t* codes, std::uint8_t* qh) {
  std::uint32_t bits = 0;
  for (int j = 0; j < kBlockValues; ++j) bits |= static_cast<std::uint32_t>((codes[j] & 0x10u) >> 4) << j;
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

void unpack_codes(const std::uint8_t* qs, const std::uint8_t* qh, int* codes) {
  std::uint32_t bits = 0;
  if (qh != nullptr) {
    for (int i = 0; i < 4; ++i) bits |= static_cast<std::uint32_t>(qh[i]) << (8 * i);
  }
  for (int j = 0; j < kHalf; ++j) {
    codes[j] = (qs[j] & 0x0f) | static_cast<int>(((bits >> j) << 4) & 0x10u);
    codes[j + kHalf] = (qs[j] >> 4) | static_cast<int>((bits >> (j + 12)) & 0x10u);
  }
}

#if defined(__AVX2__)
// q4_0 with AVX2, the same bits as symmetric_codes<4> + pack_nibbles: max |x| is exact in any
// order, the signed max is x at the first index reaching it (movemask + count trailing zeros),
// d and id are the same scalars, x*id + 8.5 are the same two roundings per lane, and
// cvttps (truncation toward zero) is the C cast for these values in [0, 17).
void quantize_q4_0_avx2(const float* x, BlockQ4_0& b) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4], a[4];
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    a[k] = _mm256_andnot_ps(sign, v[k]);
  }
  const __m256 m = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  const __m256 amax = _mm256_set1_ps(_mm_cvtss_f32(h));
  std::uint32_t hits = 0;
  for (int k = 0; k < 4; ++k) {
    hits |= static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(a[k], amax, _CMP_EQ_OQ))) << (8 * k);
  }
  // amax == 0: every lane hits, x[0] is +-0 and d = +-0 / -8, as the scalar loop's max = 0.0f
  // gives d = -0; take the scalar loop's value then.
  const float max = _mm_cvtss_f32(h) == 0.0f ? 0.0f : x[__builtin_ctz(hits)];
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = half_bits(d);
  const __m256 vid = _mm256_set1_ps(id), offset = _mm256_set1_ps(8.5f);
  const __m256i top = _mm256_set1_epi32(15);
  __m256i q[4];
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), offset)), top);
  }
  const __m256i r0 = _mm256_or_si256(q[0], _mm256_slli_epi32(q[2], 4));  // elements 0..7 | 16..23
  const __m256i r1 = _mm256_or_si256(q[1], _mm256_slli_epi32(q[3], 4));  // elements 8..15 | 24..31
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xD8);  // 16 x u16 in order
  const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b.qs), bytes);
}
#endif

}  // namespace

bool quantize_q4_0(const float* x, BlockQ4_0& b) {
#if defined(__AVX2__)
  quantize_q4_0_avx2(x, b);
#else
  std::uint8_t codes[kBlockValues];
  b.d = symmetric_codes<4>(x, codes);
  pack_nibbles(codes, b.qs);
#endif
  return finite_half(b.d);
}

void quantize_q4_0_scalar(const float* x, BlockQ4_0& b) {
  std::uint8_t codes[kBlockValues];
  b.d = symmetric_codes<4>(x, codes);
  pack_nibbles(codes, b.qs);
}

bool quantize_q5_0(const float* x, BlockQ5_0& b) {
  std::uint8_t codes[kBlockValues];
  b.d = symmetric_codes<5>(x, codes);
  pack_nibbles(codes, b.qs);
  pack_high_bits(codes, b.qh);
  return finite_half(b.d);
}

bool quantize_q4_1(const float* x, BlockQ4_1& b) {
  float min, max;
  min_max(x, min, max);
  const float d = (max - min) / 15.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = half_bits(d);
  b.m = half_bits(min);
  std::uint8_t codes[kBlockValues];
  for (int j = 0; j < kBlockValues; ++j) {
    const int q = static_cast<std::int8_t>((x[j] - min) * id + 0.5f);
    codes[j] = static_cast<std::uint8_t>(q < 15 ? q : 15);
  }
  pack_nibbles(codes, b.qs);
  return finite_half(b.d) && finite_half(b.m);
}

bool quantize_q5_1(const float* x, BlockQ5_1& b) {
  float min, max;
  min_max(x, min, max);
  const float d = (max - min) / 31.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = half_bits(d);
  b.m = half_bits(min);
  std::uint8_t codes[kBlockValues];
  // ggml has no clamp here: (x - min)*id <= 31 up to rounding, so the code is at most 31.
  for (int j = 0; j < kBlockValues; ++j) codes[j] = static_cast<std::uint8_t>((x[j] - min) * id + 0.5f);
  pack_nibbles(codes, b.qs);
  pack_high_bits(codes, b.qh);
  return finite_half(b.d) && finite_half(b.m);
}

// q4_0 and q4_1 decode the nibbles in place (element j in the low nibble of qs[j], j+16 in the
// high one), the loop ggml's dequantize_row_q4_* run, which the compiler vectorizes; the values
// are those of unpack_codes + the formula.
void dequantize_q4_0(const BlockQ4_0& b, float* out) {
  const float d = half_value(b.d);
  for (int j = 0; j < kHalf; ++j) {
    out[j] = static_cast<float>((b.qs[j] & 0x0f) - 8) * d;
    out[j + kHalf] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
  }
}

void dequantize_q5_0(const BlockQ5_0& b, float* out) {
  int codes[kBlockValues];
  unpack_codes(b.qs, b.qh, codes);
  const float d = half_value(b.d);
  for (int j = 0; j < kBlockValues; ++j) out[j] = static_cast<float>(codes[j] - 16) * d;
}

void dequantize_q4_1(const BlockQ4_1& b, float* out) {
  const float d = half_value(b.d), m = half_value(b.m);
  for (int j = 0; j < kHalf; ++j) {
    out[j] = static_cast<float>(b.qs[j] & 0x0f) * d + m;  // no fma, as ggml
    out[j + kHalf] = static_cast<float>(b.qs[j] >> 4) * d + m;
  }
}

void dequantize_q5_1(const BlockQ5_1& b, float* out) {
  int codes[kBlockValues];
  unpack_codes(b.qs, b.qh, codes);
  const float d = half_value(b.d), m = half_value(b.m);
  for (int j = 0; j < kBlockValues; ++j) out[j] = static_cast<float>(codes[j]) * d + m;
}

}  // namespace dgq::ggml

// q4_0, q4_1, q5_0, q5_1: ggml's quantize_row_*_ref and dequantize_row_* (ggml-quants.c),
// which the CPU backend's from_float/to_float call for these types. The arithmetic is kept
// exactly as ggml writes it (fp32, no fma; float->int conversions truncate toward zero), so
// the bytes match ggml's: the "+ 8.5 then truncate" is ggml's rounding, not round-to-nearest.
#include <cmath>
#include <cstring>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::ggml {
namespace {

// fp32 -> fp16 bits, nearest even, for the stored fields
// (the bits of rules::float_to_half, subnormals and overflow to inf included).
inline std::uint16_t half_bits(float v) { return rules::float_to_half(v); }

// A stored fp16 field as fp32, exactly (
// block instead of the portable bit manipulation), rules::half_to_float otherwise.
inline float half_value(std::uint16_t h) { return rules::half_to_float(h); }

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

}  // namespace

bool quantize_q4_0(const float* x, BlockQ4_0& b) {
  std::uint8_t codes[kBlockValues];
  b.d = symmetric_codes<4>(x, codes);
  pack_nibbles(codes, b.qs);
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

#pragma once
// ggml's KV cache blocks as a decode kernel reads them (32 values each, the fp16 scale d first,
// little-endian): q8_0 = d, 32 int8 codes, value j = code_j * d; q4_0 = d, 16 bytes, value j =
// (low nibble of byte j, for j < 16, else high nibble of byte j - 16, minus 8) * d; iq4_nl = the
// same nibbles indexing ggml's kvalues_iq4nl grid, times d. The products are exact in fp32 (a
// code of at most 8 bits times an fp16 scale), so any backend gets the bits the reference's
// decompress writes. The CUDA decode kernel reads blocks through these; the CPU kernel through
// the reference's decoders, and the differential test (tests/gpu) compares the two.
// DGQ v1's codes (format dgq) are one int8 code per value with no block scale: a value is
// dgq_value(code, lo, scale) of its token's segment (docs/spec.md rules 7-8), which both kernels
// call. The uniform formats (uniform2 .. uniform8: dgq2's and KIVI's codes) are unsigned codes
// of b bits in one little-endian bit stream, 32 values in 4 b bytes, with no block scale either:
// a value is uniform_value(code, lo, scale) of its token's range (docs/spec.md rule V5, KIVI).
// The codebook formats (codebook2 .. codebook4: TurboQuant's) are the same streams whose codes
// index a codebook: a value is codebook_value(level, g), the token's norm times the level, in
// the rotated basis (docs/spec.md, TurboQuant step 4 before its inverse rotation).
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/host_device.hpp"
#include "dgq/stored_format.hpp"

namespace dgq::kv_block_rules {

inline constexpr int kBlockValues = 32;

// The code width of a uniform or codebook format, 0 for the others.
DGQ_HD int uniform_bits(StoredFormat f) {
  switch (f) {
    case StoredFormat::uniform2:
    case StoredFormat::codebook2: return 2;
    case StoredFormat::uniform3:
    case StoredFormat::codebook3: return 3;
    case StoredFormat::uniform4:
    case StoredFormat::codebook4: return 4;
    case StoredFormat::uniform8: return 8;
    default: return 0;
  }
}
// The formats whose values need a (lo, scale) per span beside the codes: DGQ v1's segments, the
// uniform formats' spans and the codebook formats' tokens (lo 0, scale the token's norm). The
// ggml blocks carry their scales inside.
DGQ_HD bool has_ranges(StoredFormat f) { return f == StoredFormat::dgq || uniform_bits(f) != 0; }

DGQ_HD bool is_codebook(StoredFormat f) {
  return f == StoredFormat::codebook2 || f == StoredFormat::codebook3 || f == StoredFormat::codebook4;
}

// A codebook code's value: level (the codebook's entry) times the token's norm g, one fp32
// rounding, as TurboQuant's decode computes y_j = c[code_j] * g before rotating back.
DGQ_HD float codebook_value(float level, float g) { return level * g; }

// dgq: 32 codes of one byte (its "blocks" are 32 values of a row; the ranges live per segment);
// uniform b and codebook b: 32 codes of b bits.
DGQ_HD int block_bytes(StoredFormat f) {
  if (uniform_bits(f) != 0) return 4 * uniform_bits(f);
  return f == StoredFormat::q8_0 ? 34 : f == StoredFormat::dgq ? 32 : 18;
}

// Code j of a row of b-bit codes (bits [j b, (j + 1) b) of the row, from bit 0 of byte 0; a row
// of a multiple of 32 values starts on a byte, so a row's codes are the stream's).
DGQ_HD std::uint8_t uniform_code(const std::uint8_t* row, int j, int bits) {
  const int bit = j * bits;
  const unsigned two = row[bit / 8] | (bit % 8 + bits > 8 ? row[bit / 8 + 1] << 8 : 0u);
  return static_cast<std::uint8_t>((two >> (bit % 8)) & ((1u << bits) - 1u));
}

// A uniform code's value: fmaf(code, scale, lo) (rule V5, KIVI's uniform_value), rounded to fp16
// when the input was fp16 (what Scheme::decompress writes before any inverse rotation).
DGQ_HD float uniform_value(std::uint8_t code, float lo, float scale, bool f16) {
  const float x = fmaf(static_cast<float>(code), scale, lo);
  return f16 ? rules::half_to_float(rules::float_to_half(x)) : x;
}

// A DGQ v1 value: rule 7's fmaf(code + 127, scale, lo) of the code with rule 8's in-band marker
// removed, rounded to fp16 when the input was fp16 (what Scheme::decompress writes).
DGQ_HD float dgq_value(std::uint8_t code, float lo, float scale, bool f16) {
  const float x = rules::dequantize_code(rules::inband_unmark(static_cast<std::int8_t>(code)), lo, scale);
  return f16 ? rules::half_to_float(rules::float_to_half(x)) : x;
}

DGQ_HD float block_scale(const std::uint8_t* block) {
  return rules::half_to_float(static_cast<std::uint16_t>(block[0] | (block[1] << 8)));
}

// ggml-common.h's kvalues_iq4nl, as a function so that device code reads it without a
// device-side array.
DGQ_HD float iq4_nl_grid(int index) {
  switch (index) {
    case 0: return -127;
    case 1: return -104;
    case 2: return -83;
    case 3: return -65;
    case 4: return -49;
    case 5: return -35;
    case 6: return -22;
    case 7: return -10;
    case 8: return 1;
    case 9: return 13;
    case 10: return 25;
    case 11: return 38;
    case 12: return 53;
    case 13: return 69;
    case 14: return 89;
    default: return 113;
  }
}

// Value j (0..31) of one block of q8_0, q4_0 or iq4_nl (dgq's values: dgq_value).
DGQ_HD float block_value(StoredFormat f, const std::uint8_t* block, int j) {
  const float d = block_scale(block);
  if (f == StoredFormat::q8_0) return static_cast<float>(static_cast<std::int8_t>(block[2 + j])) * d;
  const std::uint8_t byte = block[2 + (j & 15)];
  const int nibble = j < 16 ? (byte & 0x0F) : (byte >> 4);
  return f == StoredFormat::q4_0 ? static_cast<float>(nibble - 8) * d : iq4_nl_grid(nibble) * d;
}

}  // namespace dgq::kv_block_rules

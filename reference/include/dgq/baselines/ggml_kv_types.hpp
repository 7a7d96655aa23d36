#pragma once
// llama.cpp's low-bit KV-cache types besides q8_0 (dgq/baselines/q8_0.hpp): q4_0, q4_1, q5_0,
// q5_1 and iq4_nl. Blocks of 32 values with ggml's layouts (ggml-common.h, block_q4_0 ...),
// fp16 fields IEEE binary16 little-endian. The quantizers are the CPU backend's runtime ones,
// ggml_get_type_traits_cpu(type)->from_float, which for all five types is the scalar `_ref`
// function of ggml-quants.c (ggml-cpu/quants.c forwards to it); the decoders are
// ggml_get_type_traits(type)->to_float (dequantize_row_*). Checked byte for byte against
// tests/fixtures/oracles/ggml-kv-types (ggml d99724f2b141). docs/schemes.md gives the rules.
#include <cstdint>

namespace dgq::ggml {

inline constexpr int kBlockValues = 32;  // QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK4_NL = 32

struct BlockQ4_0 {
  std::uint16_t d;      // scale: the value of largest |x| divided by -8
  std::uint8_t qs[16];  // element j in the low nibble of qs[j], element j+16 in the high nibble
};
struct BlockQ4_1 {
  std::uint16_t d, m;  // scale (max-min)/15 and the minimum
  std::uint8_t qs[16];
};
struct BlockQ5_0 {
  std::uint16_t d;      // value of largest |x| divided by -16
  std::uint8_t qh[4];   // bit 4 of element j's code at bit j of this little-endian uint32
  std::uint8_t qs[16];  // low 4 bits, nibbles as in q4_0
};
struct BlockQ5_1 {
  std::uint16_t d, m;  // (max-min)/31 and the minimum
  std::uint8_t qh[4];
  std::uint8_t qs[16];
};
struct BlockIQ4NL {
  std::uint16_t d;      // least-squares scale of the non-linear grid kIQ4NLValues
  std::uint8_t qs[16];  // grid indices, nibbles as in q4_0
};
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
                  sizeof(BlockQ5_1) == 24 && sizeof(BlockIQ4NL) == 18,
              "ggml block sizes, no padding");

// ggml-common.h kvalues_iq4nl.
inline constexpr std::int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

// Quantize one full block of 32 values (callers zero-pad a partial block). Each returns false
// when a stored fp16 field is infinite (only possible from f32 input beyond fp16's range).
bool quantize_q4_0(const float* x, BlockQ4_0& b);
void quantize_q4_0_scalar(const float* x, BlockQ4_0& b);  // the rule as ggml writes it (tests)
bool quantize_q4_1(const float* x, BlockQ4_1& b);
bool quantize_q5_0(const float* x, BlockQ5_0& b);
bool quantize_q5_1(const float* x, BlockQ5_1& b);
// ggml leaves the grid indices of a block with max |x| < 1e-15 unset: its nibbles are whatever
// its index buffer last held, i.e. the previous block's indices (the buffer is reused block
// after block). dgq makes that explicit: `indices` carries them from block to block (start
// with zeros); d is 0 there, so the decoded values do not depend on them.
bool quantize_iq4_nl(const float* x, BlockIQ4NL& b, std::uint8_t (&indices)[kBlockValues]);
// The same block with the grid search supplied: grid_indices(x, id, indices) sets indices[j] to
// the nearest grid index of id*x[j] (best_index_int8) for the block's 32 values. The rest of the
// block's arithmetic is this one definition; a backend with a faster search (cpu/'s AVX2 one)
// passes it here instead of repeating the block.
using IQ4NLGridIndices = void (*)(const float* x, float id, std::uint8_t* indices);
bool quantize_iq4_nl_with(IQ4NLGridIndices grid_indices, const float* x, BlockIQ4NL& b,
                          std::uint8_t (&indices)[kBlockValues]);

// out[0..32) as ggml decodes the block.
void dequantize_q4_0(const BlockQ4_0& b, float* out);
void dequantize_q4_1(const BlockQ4_1& b, float* out);
void dequantize_q5_0(const BlockQ5_0& b, float* out);
void dequantize_q5_1(const BlockQ5_1& b, float* out);
void dequantize_iq4_nl(const BlockIQ4NL& b, float* out);

}  // namespace dgq::ggml

#pragma once
// llama.cpp's q8_0 block (ggml-common.h block_q8_0): 32 values as an fp16 scale d followed by
// 32 int8 codes, 34 bytes, 8.5 bits per value. The quantizer is ggml's x86 runtime path
// (ggml-cpu quantize_row_q8_0, AVX2), not quantize_row_q8_0_ref: it multiplies by 127/amax
// rather than 1/d and rounds half to even. tests/fixtures/oracles/ggml-q8_0 pins the bytes.
#include <cstdint>

#include "dgq/host_device.hpp"

namespace dgq::q8_0 {

inline constexpr int kBlockValues = 32;
inline constexpr int kBlockBytes = 34;

struct Block {
  std::uint16_t d;  // IEEE binary16, little-endian in storage
  std::int8_t qs[kBlockValues];
};
static_assert(sizeof(Block) == kBlockBytes, "block_q8_0 is 34 bytes, no padding");

// Quantizes x[0..n) (n <= 32; missing values count as 0 and get code 0) into block.
void quantize_block(const float* x, int n, Block& block);

// The same 34 bytes written straight to out (d little-endian, then the codes: Block's layout),
// so that a caller filling a part writes each block once, without a Block on the stack and a
// copy of it. Returns d's bits.
std::uint16_t quantize_block_into(const float* x, int n, std::uint8_t* out);

// out[j] = qs[j] * float(d) for j < n.
void dequantize_block(const Block& block, int n, float* out);

// A token row of n values (n >= 0) as ceil(n/32) blocks written to out, the last one padded
// as quantize_block pads: quantize_block_into block after block, in one loop without a
// function call per block, testing the input for NaN/Inf on the way (so callers need no pass
// of their own). non_finite_input: some x is NaN/Inf (the bytes are then meaningless; the
// caller reports the element); else scale_overflow: some block's d is infinite (the caller
// finds which with quantize_block_into, for its message); else ok.
enum class RowStatus : std::uint8_t { ok, scale_overflow, non_finite_input };
RowStatus quantize_row_into(const float* x, std::int64_t n, std::uint8_t* out);

// out[0..n) from ceil(n/32) stored blocks: dequantize_block block after block. Returns false
// when some stored d is NaN/Inf (out is then written anyway; the caller reports the block).
bool dequantize_row(const std::uint8_t* blocks, std::int64_t n, float* out);

}  // namespace dgq::q8_0

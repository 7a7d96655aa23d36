#pragma once
// DGQ v3 rule W4: symmetric codes of b bits per block of channels, ggml's q4_0 idea at any width:
// the block's signed extreme M (largest |y|, first on ties) maps to the lowest code, the scale
// d = fp16(M / -2^(b-1)), codes u = clamp(rint(y / d), -2^(b-1), 2^(b-1) - 1) + 2^(b-1), decoded
// as (u - 2^(b-1)) * d (exact in fp32). A row's codes are one little-endian bit stream starting
// on a byte (D * b is a multiple of 8 for every D the family accepts), and so is every block's
// (a block has at least 16 channels). The element rules are the kernel table's
// (signed_extreme, symmetric_codes, symmetric_values; dgq3/symmetric_codes.hpp writes them out).
// Rule W8 swaps the uniform levels for a Lloyd-Max grid (grid_codes, grid_values) at 2-5 bits:
// the extreme then maps to the grid's lowest level, -127.
#include <cstdint>

namespace dgq::kernels {
struct CpuKernels;
}

namespace dgq::schemes::dgq3 {

// The levels a block's codes index: rule W4's evenly spaced ones, or rule W8's grid.
enum class CodeGrid : std::uint8_t { uniform, lloyd };

// fp16 bits of the block's scale for y[0 .. n); throws InputError (naming token t and block b)
// when it does not fit fp16.
std::uint16_t block_scale(const kernels::CpuKernels& k, const float* y, std::int64_t n, int bits, CodeGrid grid,
                          std::int64_t t, std::int64_t b);

// Codes of y[0 .. n) under the fp16 scale, written at `bits` each from byte `byte_offset` of out
// (n * bits a multiple of 8). When `values` is not null it receives what the codes decode to.
void put_block_codes(const kernels::CpuKernels& k, const float* y, std::int64_t n, int bits, CodeGrid grid,
                     std::uint16_t scale, std::uint8_t* out, std::uint64_t byte_offset, float* values);

// The inverse: n values from the codes at byte_offset.
void get_block_values(const kernels::CpuKernels& k, const std::uint8_t* in, std::uint64_t byte_offset, std::int64_t n,
                      int bits, CodeGrid grid, std::uint16_t scale, float* y);

}  // namespace dgq::schemes::dgq3

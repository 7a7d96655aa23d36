#pragma once
// The functions of cpu/'s kernel table (dgq/kernels/cpu_kernels.hpp says what each computes);
// fast_kernels.cpp puts each in the table where the ISA extension it needs is compiled in and
// keeps the reference's entry otherwise.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::cpu {

// fp16 <-> fp32 buffers (F16C)
void halves_to_floats(const std::uint16_t* h, float* f, std::int64_t n);
void floats_to_halves(const float* f, std::uint16_t* h, std::int64_t n);

namespace row {  // DGQ v1's row loops (AVX2 + F16C + FMA)
bool fast_is_vectorized();
void load_row(const void* src, DType dt, std::int64_t n, float* row);
float canonical_sum(const float* x, std::int64_t n);
float canonical_sum_of_squares(const float* x, std::int64_t n, float mean);
kernels::RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi,
                           kernels::RangeShape shape);
std::int64_t scan_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo, float* hi,
                       kernels::RangeShape shape, kernels::RowStats* stats);
void quantize_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,
                   std::int8_t* codes);
void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes);
void dequantize_row(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt, void* out);
}  // namespace row

namespace codes {  // uniform-code runs (AVX2)
schemes::MinMax min_max(const float* x, std::int64_t n);
void uniform_codes(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q);
void uniform_codes_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                               int offset, std::uint8_t* q);
void uniform_codes_offset(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* q);
void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out);
void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out);
void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                         int levels, int offset, std::uint8_t* out);
void rule7_codes(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q);
void pack_crumbs(const std::uint8_t* q, std::int64_t n, std::uint8_t* out);  // AVX2
bool widen_extremes(const void* src, DType dt, std::int64_t n, std::int64_t group, float* row,
                    kernels::Extremes* ext);  // AVX2 + F16C
}  // namespace codes

// Walsh-Hadamard (AVX2)
void fwht_in_place(float* x, int n);
void fwht_scaled_in_place(float* x, int n, float scale);

namespace q8_0 {  // AVX2 full blocks, F16C scales
std::uint16_t quantize_block_into(const float* x, int n, std::uint8_t* out);
dgq::q8_0::RowStatus quantize_row_into(const float* x, std::int64_t n, std::uint8_t* out);
bool dequantize_row(const std::uint8_t* blocks, std::int64_t n, float* out);
}  // namespace q8_0

namespace ggml {  // AVX2
bool quantize_q4_0(const float* x, dgq::ggml::BlockQ4_0& b);
bool quantize_iq4_nl(const float* x, dgq::ggml::BlockIQ4NL& b, std::uint8_t (&indices)[dgq::ggml::kBlockValues]);
}  // namespace ggml

namespace fp8 {  // AVX2
void e4m3_codes(const float* x, std::int64_t n, float scale, std::uint8_t* out);
}  // namespace fp8

namespace dgq3 {  // DGQ v3's rules W4, W5 and W8 (AVX2)
void window_mean(const float* ring, std::int64_t window, std::int64_t count, std::int64_t channels, float* mean);
float signed_extreme(const float* y, std::int64_t n);
void symmetric_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);
void symmetric_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);
void grid_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);
void grid_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);
}  // namespace dgq3
void codebook_cells(const float* u, int d, const float* boundaries, int edges, std::uint8_t* cells);  // AVX2

// dgq2's row-by-row encoder (no ISA condition: its speed is the table's kernels and one read).
Compressed dgq2_compress_direct(const kernels::CpuKernels& k, const schemes::dgq2::Params& p, const std::string& spec,
                                ConstTensor x, TensorRole role, const ConstTensor* rotated);

bool store_fp16_ranges8(const float* mins, const float* maxs, int levels, std::vector<std::uint8_t>& out, float* lo,
                        float* inv);  // AVX2 + F16C

}  // namespace dgq::cpu

#pragma once
// The primitives in which a family's fast CPU implementation differs from its reference: one
// table of function pointers, as ggml's type traits hold from_float_ref beside from_float. A
// family's Scheme class (one class, in reference/) computes through the table it was made
// with, so its layout, parts and error messages exist once; reference/ defines the scalar
// table (reference_kernels(): the rules written out, the oracle), cpu/ the vectorized one
// (dgq/cpu/kernels.hpp). Every entry of both tables gives the same bits for every input
// (tests/reference/test_scheme_conformance.cpp compares the two registrations of each family,
// and tests/cpu the kernels one by one).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::schemes::dgq2 {
struct Params;  // dgq/schemes/dgq2/params.hpp
}

namespace dgq::kernels {

// Pass-1 statistics of one row (DGQ v1 rule 1).
struct RowStats {
  float sum = 0.0f;          // canonical sum S (rule 1)
  float sum_squares = 0.0f;  // canonical S2 of (x - S/D)
  bool finite = true;        // false if any element is NaN or +-Inf
};

// Whether scan_row tracks min/max per channel (segment-channel) or over the row (segment).
enum class RangeShape { per_channel, whole_row };

// Running extremes of a run of finite values: the stored_lo()/stored_hi() of adding each to a
// dgq::schemes::MinMax in order (the reference's uniform-code helper).
struct Extremes {
  float lo, hi;
};

struct CpuKernels {
  std::string_view name;  // "reference", "avx2" (reported by dgq-bench)

  // fp16 <-> fp32 over a buffer (docs/spec.md rule 0): exact widening; narrowing to nearest
  // even, subnormals and overflow to inf included (the bits of dgq::rules).
  void (*halves_to_floats)(const std::uint16_t* h, float* f, std::int64_t n);
  void (*floats_to_halves)(const float* f, std::uint16_t* h, std::int64_t n);

  // DGQ v1's per-row loops (docs/spec.md rules 0, 1, 6, 7).
  void (*load_row)(const void* src, DType dt, std::int64_t n, float* row);  // widen n elements exactly
  float (*canonical_sum)(const float* x, std::int64_t n);
  float (*canonical_sum_of_squares)(const float* x, std::int64_t n, float mean);
  // Pass 1 on one row: load, finiteness, S and S2, running min/max per channel (lo, hi have n
  // entries) or over the row (one entry each).
  RowStats (*scan_row)(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape);
  // Pass 1 on `rows` consecutive rows (a block): stats[r] per row, lo/hi over all of them. Stops
  // at the first row with a NaN/Inf and returns its index, that row's fp32 values in `row`.
  std::int64_t (*scan_rows)(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo,
                            float* hi, RangeShape shape, RowStats* stats);
  // Rule 7 on `rows` consecutive rows sharing lo/inv (one entry per channel), and on one row.
  void (*quantize_rows)(const void* src, DType dt, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,
                        std::int8_t* codes);
  void (*quantize_row)(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv,
                       std::int8_t* codes);
  // Rule 7's dequantization rounded to dt; lo/scale per channel.
  void (*dequantize_row)(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt,
                         void* out);

  // Uniform codes of the baselines and dgq2 (dgq/kernels/uniform_codes.hpp's rules
  // over a run): q[j] = uniform_code(x[j], lo, inv, levels) (+ offset), levels (+ offset) <= 255.
  Extremes (*min_max)(const float* x, std::int64_t n);
  void (*uniform_codes)(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q);
  void (*uniform_codes_per_channel)(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                    int offset, std::uint8_t* q);
  void (*uniform_codes_offset)(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                               std::uint8_t* q);
  // 4-bit codes two to a byte, low nibble first (n even, levels + offset <= 15).
  void (*uniform_nibbles)(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                          std::uint8_t* out);
  void (*uniform_nibbles_per_channel)(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                      int offset, std::uint8_t* out);
  // The same on a row of the input (n elements of dtype dt), a range per channel or lo[0]/inv[0].
  void (*uniform_nibbles_row)(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv,
                              bool per_channel, int levels, int offset, std::uint8_t* out);
  // Row of the input widened exactly into row[0 .. n) (n elements of dtype dt) with, for each
  // group of `group` elements (the last may be shorter), its extremes in ext[g] as min_max
  // gives them (callers store them with MinMax's stored_lo/stored_hi). Returns false when some
  // element is NaN/Inf (row and ext then unspecified: the caller reports it with
  // widen_row_checked's message). One pass where the reference takes three.
  bool (*widen_extremes)(const void* src, DType dt, std::int64_t n, std::int64_t group, float* row, Extremes* ext);
  // 2-bit codes (each <= 3) four to a byte, lowest first: out[k] = q[4k] | q[4k+1] << 2 |
  // q[4k+2] << 4 | q[4k+3] << 6 for k < n/4 (n a multiple of 4): the stream BitPacker writes.
  void (*pack_crumbs)(const std::uint8_t* q, std::int64_t n, std::uint8_t* out);
  // q[j] = rule7_code(x[j], lo, inv) stored as its byte.
  void (*rule7_codes)(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q);

  // The Walsh-Hadamard transform in docs/spec.md's butterfly order (dgq/fwht.hpp).
  void (*fwht_in_place)(float* x, int n);
  void (*fwht_scaled_in_place)(float* x, int n, float scale);

  // llama.cpp's blocks (dgq/baselines/q8_0.hpp, ggml_kv_types.hpp).
  q8_0::RowStatus (*q8_0_quantize_row)(const float* x, std::int64_t n, std::uint8_t* out);
  bool (*q8_0_dequantize_row)(const std::uint8_t* blocks, std::int64_t n, float* out);
  bool (*quantize_q4_0)(const float* x, ggml::BlockQ4_0& b);
  bool (*quantize_iq4_nl)(const float* x, ggml::BlockIQ4NL& b, std::uint8_t (&indices)[ggml::kBlockValues]);

  // dgq2 rule V4 for eight fp16 ranges at once when all sixteen extremes are fp16 numbers
  // (dgq/schemes/dgq2/range_store.hpp's store_range eight times); false, having written nothing,
  // otherwise. The reference's is always false: it stores them one by one.
  bool (*store_fp16_ranges8)(const float* mins, const float* maxs, int levels, std::vector<std::uint8_t>& out,
                             float* lo, float* inv);

  // dgq2's row-by-row encoder (cpu/src/dgq2_direct_encode.cpp): compress() of a dgq2 scheme
  // with parameters p (for the role) and canonical spec `spec`, reading x (or `rotated`, the
  // quantized rows of x rotated and rounded to x.dtype, x checked finite) a row at a time, with
  // no fp32 copy of the tensor. Null in the reference's table: the reference's dgq2 encodes by
  // the rules on an fp32 copy (reference/src/schemes/dgq2_scheme.cpp), with the same bytes.
  Compressed (*dgq2_compress_direct)(const CpuKernels& k, const schemes::dgq2::Params& p, const std::string& spec,
                                     ConstTensor x, TensorRole role, const ConstTensor* rotated);

  // TurboQuant's codebook cell of each u[j]: the number of the `edges` sorted boundaries below it.
  void (*turboquant_cells)(const float* u, int d, const float* boundaries, int edges, std::uint8_t* cells);

  // fp8-e4m3 (dgq/baselines/fp8_e4m3.hpp): out[j] = float_to_e4m3(x[j] / scale).
  void (*e4m3_codes)(const float* x, std::int64_t n, float scale, std::uint8_t* out);

  // DGQ v3 (docs/spec.md "DGQ v3"). Rule W5's window mean of a ring of `window` rows of
  // `channels` into which `count` rows were pushed (row j at slot j % window): with held =
  // min(count, window), mean[c] = (rows count-held .. count-1, oldest first, added in fp32 to 0)
  // / held; 0 when count is 0.
  void (*window_mean)(const float* ring, std::int64_t window, std::int64_t count, std::int64_t channels, float* mean);
  // Rule W4: the signed extreme of y[0 .. n) (largest |y|, the first on ties; +0 when all are
  // zeros), y finite.
  float (*signed_extreme)(const float* y, std::int64_t n);
  // Rule W4's codes, one byte each: u[j] = clamp(rint(y[j] * inverse), -2^(b-1), 2^(b-1) - 1) +
  // 2^(b-1), 2 <= bits <= 8.
  void (*symmetric_codes)(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);
  // Their values: y[j] = (u[j] - 2^(b-1)) * d.
  void (*symmetric_values)(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);
  // Rule W8's codes on the Lloyd-Max grid (dgq/dgq3_grids.hpp), one byte each: u[j] =
  // grid_code(y[j] * inverse, bits) (the product rounded, no fma), 2 <= bits <= 5.
  void (*grid_codes)(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);
  // Their values: y[j] = grid_level(bits, u[j]) * d.
  void (*grid_values)(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);
};

// The scalar table: the rules as docs/spec.md writes them.
const CpuKernels& reference_kernels();

// The table a device computes with on the CPU: reference_kernels() for Device::reference, the
// fast table cpu/ installs (install_fast_kernels) for any other device, or the reference's when
// no fast table is linked. For code told only a Device, such as a modifier's wrap, and for the
// plain dgq_encode/dgq_decode of dgq/dgq.hpp (which compute as Device::cpu does).
const CpuKernels& kernels_for(Device device);
// Called once by cpu/ from a static initializer; returns true.
bool install_fast_kernels(const CpuKernels& k);

}  // namespace dgq::kernels

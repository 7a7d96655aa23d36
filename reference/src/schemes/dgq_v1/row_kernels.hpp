#pragma once
// The per-row loops of DGQ's two passes (docs/spec.md rules 0, 1, 6, 7), the spec written out
// (the oracle): the reference's entries of dgq/kernels/cpu_kernels.hpp. cpu/ has the AVX2
// ones with identical bits; the encoder and decoder call whichever table their scheme holds.
#include <cstdint>

#include "dgq/kernels/cpu_kernels.hpp"  // RowStats, RangeShape
#include "dgq/tensor.hpp"

namespace dgq::kernels {

#define DGQ_ROW_KERNELS                                                                                                \
  /* Converts n elements of `src` (dtype dt) to fp32 in `row`. */                                                      \
  void load_row(const void* src, DType dt, std::int64_t n, float* row);                                                \
  /* Rule 1's canonical sums over a fp32 row. */                                                                       \
  float canonical_sum(const float* x, std::int64_t n);                                                                 \
  float canonical_sum_of_squares(const float* x, std::int64_t n, float mean);                                          \
  /* Pass 1 on one row: load, finiteness, S and S2, and running min/max: per channel (lo, hi  */                       \
  /* have n entries) or over the whole row (one entry each). */                                                        \
  RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape);    \
  /* Pass 1 on `rows` consecutive rows of n elements (a block): stats[r] for each row, lo/hi    */                     \
  /* accumulated over all of them. Stops at the first row with a NaN or Inf and returns its     */                     \
  /* index, with that row's fp32 values in `row` (stats[r] unset); returns `rows` otherwise.    */                     \
  std::int64_t scan_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo,          \
                         float* hi, RangeShape shape, RowStats* stats);                                                \
  /* Rule 7 on `rows` consecutive rows sharing one segment's lo/inv (one entry per channel). */                        \
  void quantize_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,  \
                     std::int8_t* codes);                                                                              \
  /* Rule 7 on one row; lo/inv have one entry per channel. */                                                          \
  void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes); \
  /* Rule 7's dequantization, rounded to dt; lo/scale per channel. */                                                  \
  void dequantize_row(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt,         \
                      void* out);

namespace scalar {
DGQ_ROW_KERNELS
}
#undef DGQ_ROW_KERNELS

}  // namespace dgq::kernels

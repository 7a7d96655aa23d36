#pragma once
// The two kernel tables under the names the kernel tests use: scalar:: the reference's (the
// rules written out, the oracle), fast:: cpu/'s. Each test runs both on the same adversarial
// inputs and requires the same bits.
#include "dgq/cpu/kernels.hpp"
#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::test {
inline const kernels::CpuKernels& reference_table() { return kernels::reference_kernels(); }
inline const kernels::CpuKernels& fast_table() { return cpu::fast_kernels(); }
}  // namespace dgq::test

#define DGQ_KERNEL_NAMES(ns, table)                                              \
  namespace ns {                                                                 \
  inline const auto load_row = table().load_row;                                 \
  inline const auto canonical_sum = table().canonical_sum;                       \
  inline const auto canonical_sum_of_squares = table().canonical_sum_of_squares; \
  inline const auto scan_row = table().scan_row;                                 \
  inline const auto scan_rows = table().scan_rows;                               \
  inline const auto quantize_rows = table().quantize_rows;                       \
  inline const auto quantize_row = table().quantize_row;                         \
  inline const auto dequantize_row = table().dequantize_row;                     \
  }
DGQ_KERNEL_NAMES(scalar, dgq::test::reference_table)
DGQ_KERNEL_NAMES(fast, dgq::test::fast_table)
#undef DGQ_KERNEL_NAMES

// Whether cpu/'s row loops are the vectorized ones in this build.
inline bool fast_is_vectorized() { return dgq::cpu::fast_kernels().name == "avx2"; }

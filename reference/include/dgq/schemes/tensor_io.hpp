#pragma once
// The boundary every scheme shares: input tensors are widened to fp32 (exactly) with a
// NaN/Inf check that names the element, and decoded fp32 values are narrowed to the output
// dtype with round-to-nearest-even (docs/spec.md rule 0). The fp16 conversions are the kernel
// table's (k: the scheme's; F16C in cpu/'s, the rules in the reference's).
#include <string_view>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/part_checks.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::schemes {

// Row-major fp32 copy of x. Throws InputError "<scheme>: non-finite value nan at token t,
// channel d" for the first NaN/Inf.
std::vector<float> widen_checked(const kernels::CpuKernels& k, ConstTensor x, std::string_view scheme);

// The same NaN/Inf check without keeping the fp32 copy: dgq::check_finite (dgq/tensor.hpp),
// which the causal cache calls too.
using dgq::check_finite;

// Throws widen_checked's InputError "<scheme>: unsupported input dtype" for a dtype code
// that is none of f16/bf16/f32 (row-at-a-time schemes call it first, so that an empty tensor
// is rejected as before).
void check_input_dtype(ConstTensor x, std::string_view scheme);

// Row t of x widened to fp32 (exactly) into row[0 .. x.channels), with widen_checked's
// NaN/Inf check and message for the row's first bad element (x.dtype already checked). Schemes that work a row at a
// time use it with one small reusable buffer instead of a whole-tensor fp32 copy.
void widen_row_checked(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row,
                       std::string_view scheme);

// Row t of x as fp32 with widen_row_checked's check and message: a pointer into x itself when
// x is fp32 (no copy), else row[] filled by widen_row_checked.
const float* row_as_float(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row,
                          std::string_view scheme);

// Row t of x as fp32 without the NaN/Inf check: for a kernel that tests finiteness itself
// (and then calls row_as_float for the message). A pointer into x when x is fp32.
const float* row_as_float_unchecked(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row);

// Runs body, which widens x's rows in order with widen_row_checked. If body throws another
// InputError (a range that overflows, found at a row before the tensor's first NaN/Inf), the
// NaN/Inf is reported instead, as when the whole tensor was checked before quantizing.
template <class Body>
void non_finite_errors_first(ConstTensor x, std::string_view scheme, Body body) {
  try {
    body();
  } catch (const InputError&) {
    if (x.data != nullptr && x.channels >= 1) check_finite(x, scheme);
    throw;
  }
}

// Writes values (tokens*channels fp32) into out, rounding to out.dtype (nearest even); a
// finite value that would round to infinity saturates to the largest finite one.
void narrow_into(const kernels::CpuKernels& k, const float* values, MutTensor out);

// The same for rows [first, first + count) of out from values[0 .. count*channels): decoders
// that produce a few rows at a time write their output in one pass, through a small buffer
// that stays in cache, instead of a whole-tensor fp32 buffer narrowed afterwards.
void narrow_rows_into(const kernels::CpuKernels& k, const float* values, MutTensor out, std::int64_t first,
                      std::int64_t count);

// The byte buffer of c's part `name` (moved out; empty when c has no such part), for a
// compress_into that reuses it: its capacity is what matters, its bytes are overwritten.
std::vector<std::uint8_t> take_part_buffer(Compressed& c, std::string_view name);

// Rows a row-at-a-time codec handles per step: 4096 elements (16 KiB of fp32), so its row
// buffers stay in L1/L2 while the per-call costs are spread over many rows.
std::int64_t rows_per_step(std::int64_t channels);

}  // namespace dgq::schemes

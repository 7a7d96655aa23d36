#include "dgq/schemes/tensor_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq::schemes {
namespace {

// One pass per dtype: the widening is exact, the finiteness check rides along.
template <class Load>
std::vector<float> widen_with(std::int64_t n, std::int64_t channels, std::string_view scheme, Load load) {
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[i] = load(i);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i])) throw_non_finite(scheme, out[i], i, channels);
  }
  return out;
}

// A decoded value may exceed the dtype's largest finite number although every input was
// finite: q8_0 rounds d = amax/127 up to fp16, so 127*d can pass 65504 and would round to
// infinity. Such values become the largest finite number of that sign (infinity bits minus
// one is the largest finite pattern in both fp16 and bf16).
std::uint16_t saturate_infinity(std::uint16_t bits, std::uint16_t infinity_bits) {
  return (bits & 0x7fffu) == infinity_bits ? static_cast<std::uint16_t>(bits - 1u) : bits;
}

}  // namespace

std::vector<float> widen_checked(const kernels::CpuKernels& k, ConstTensor x, std::string_view scheme) {
  const std::int64_t n = x.tokens * x.channels;
  switch (x.dtype) {
    case DType::f16: {
      check_finite(x, scheme);
      std::vector<float> out(static_cast<std::size_t>(n));
      k.halves_to_floats(static_cast<const std::uint16_t*>(x.data), out.data(), n);
      return out;
    }
    case DType::bf16: {
      const auto* b = static_cast<const std::uint16_t*>(x.data);
      return widen_with(n, x.channels, scheme, [b](std::int64_t i) { return rules::bf16_to_float(b[i]); });
    }
    case DType::f32: {
      const auto* f = static_cast<const float*>(x.data);
      return widen_with(n, x.channels, scheme, [f](std::int64_t i) { return f[i]; });
    }
  }
  throw InputError(std::string(scheme) + ": unsupported input dtype");
}

void check_input_dtype(ConstTensor x, std::string_view scheme) {
  if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32) {
    throw InputError(std::string(scheme) + ": unsupported input dtype");
  }
}

void widen_row_checked(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row,
                       std::string_view scheme) {
  const std::int64_t n = x.channels;
  const std::size_t first = static_cast<std::size_t>(t * n);
  switch (x.dtype) {
    case DType::f16: k.halves_to_floats(static_cast<const std::uint16_t*>(x.data) + first, row, n); break;
    case DType::bf16: {
      const auto* b = static_cast<const std::uint16_t*>(x.data) + first;
      for (std::int64_t d = 0; d < n; ++d) row[d] = rules::bf16_to_float(b[d]);
      break;
    }
    case DType::f32:
      std::memcpy(row, static_cast<const float*>(x.data) + first, static_cast<std::size_t>(n) * sizeof(float));
      break;
  }
  // Exponent bits all set <=> NaN/Inf; an OR over the row vectorizes, the search for the
  // culprit runs only when there is one.
  std::uint32_t all_ones = 0;
  for (std::int64_t d = 0; d < n; ++d) {
    all_ones |= (rules::float_bits(row[d]) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  }
  if (all_ones == 0) return;
  for (std::int64_t d = 0; d < n; ++d) {
    if (!std::isfinite(row[d])) throw_non_finite(scheme, row[d], t * n + d, n);
  }
}

const float* row_as_float(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row,
                          std::string_view scheme) {
  if (x.dtype != DType::f32) {
    widen_row_checked(k, x, t, row, scheme);
    return row;
  }
  const std::int64_t n = x.channels;
  const float* in = static_cast<const float*>(x.data) + t * n;
  std::uint32_t all_ones = 0;  // as in widen_row_checked
  for (std::int64_t d = 0; d < n; ++d) all_ones |= (rules::float_bits(in[d]) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  if (all_ones != 0) {
    for (std::int64_t d = 0; d < n; ++d) {
      if (!std::isfinite(in[d])) throw_non_finite(scheme, in[d], t * n + d, n);
    }
  }
  return in;
}

const float* row_as_float_unchecked(const kernels::CpuKernels& k, ConstTensor x, std::int64_t t, float* row) {
  const std::int64_t n = x.channels;
  const std::size_t first = static_cast<std::size_t>(t * n);
  switch (x.dtype) {
    case DType::f16: k.halves_to_floats(static_cast<const std::uint16_t*>(x.data) + first, row, n); return row;
    case DType::bf16: {
      const auto* b = static_cast<const std::uint16_t*>(x.data) + first;
      for (std::int64_t d = 0; d < n; ++d) row[d] = rules::bf16_to_float(b[d]);
      return row;
    }
    case DType::f32: break;
  }
  return static_cast<const float*>(x.data) + first;
}

void narrow_into(const kernels::CpuKernels& k, const float* values, MutTensor out) {
  const std::int64_t n = out.tokens * out.channels;
  switch (out.dtype) {
    case DType::f16: {
      auto* h = static_cast<std::uint16_t*>(out.data);
      k.floats_to_halves(values, h, n);
      for (std::int64_t i = 0; i < n; ++i) h[i] = saturate_infinity(h[i], 0x7c00u);
      return;
    }
    case DType::bf16: {
      auto* b = static_cast<std::uint16_t*>(out.data);
      for (std::int64_t i = 0; i < n; ++i) b[i] = saturate_infinity(rules::float_to_bf16(values[i]), 0x7f80u);
      return;
    }
    case DType::f32:
      if (n > 0) std::memcpy(out.data, values, static_cast<std::size_t>(n) * sizeof(float));
      return;
  }
}

void narrow_rows_into(const kernels::CpuKernels& k, const float* values, MutTensor out, std::int64_t first,
                      std::int64_t count) {
  const std::size_t offset = static_cast<std::size_t>(first * out.channels) * dtype_size(out.dtype);
  narrow_into(k, values, MutTensor{static_cast<std::byte*>(out.data) + offset, out.dtype, count, out.channels});
}

std::vector<std::uint8_t> take_part_buffer(Compressed& c, std::string_view name) {
  for (Part& p : c.parts)
    if (p.name == name) return std::move(p.bytes);
  return {};
}

std::int64_t rows_per_step(std::int64_t channels) {
  return std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, channels));
}

}  // namespace dgq::schemes

// int8-token: one asymmetric range per token (its min and max over the channels), codes by
// DGQ rule 7 (253 levels, code = q - 127). Parts: "codes" (tokens*channels int8, row-major)
// and "ranges" (per token lo, hi as fp32).
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"
#include "schemes/uniform_code_runs.hpp"

namespace dgq::schemes {
namespace {

class Int8TokenScheme final : public Scheme {
 public:
  explicit Int8TokenScheme(const kernels::CpuKernels& k) : k_(k) {}
  std::string spec() const override { return "int8-token"; }
  std::string family() const override { return "int8-token"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "int8-token");
    Compressed c = start_compressed(spec(), x, role);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens * x.channels));
    std::vector<std::uint8_t> ranges;
    if (x.channels > 0) ranges.reserve(static_cast<std::size_t>(x.tokens) * kRangeBytes);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
    non_finite_errors_first(x, "int8-token", [&] {
      for (std::int64_t t = 0; t < x.tokens && x.channels > 0; ++t) {
        // One pass: the row widened, checked and its extremes; a NaN/Inf gets
        // widen_row_checked's message.
        kernels::Extremes e;
        if (!k_.widen_extremes(static_cast<const std::byte*>(x.data) + t * row_bytes, x.dtype, x.channels, x.channels,
                               row.data(), &e)) {
          widen_row_checked(k_, x, t, row.data(), "int8-token");
          throw std::logic_error("widen_extremes reported a NaN/Inf that widen_row_checked did not find");
        }
        const MinMax r{e.lo, e.hi};
        check_range_finite(r, "int8-token", [t] { return "token " + std::to_string(t); });
        const float lo = r.stored_lo(), hi = r.stored_hi();
        append_range(ranges, lo, hi);
        const float inv = rules::code_inverse_step(lo, hi);
        k_.rule7_codes(row.data(), x.channels, lo, inv, codes.data() + t * x.channels);
      }
    });
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"ranges", std::move(ranges)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t n = static_cast<std::uint64_t>(c.tokens * c.channels);
    const Part& codes = expect_part(c, "codes", n);
    const Part& ranges = expect_part(c, "ranges", range_bytes(c.tokens, c.channels));
    // A step of rows decoded into a small buffer and narrowed straight into out: one pass.
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens && c.channels > 0; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t t = t0; t < t0 + rows; ++t) {
        const Range r = read_range(ranges.bytes, static_cast<std::size_t>(t));
        const float scale = rules::dequant_scale(r.lo, r.hi);
        float* dst = values.data() + (t - t0) * c.channels;
        const std::uint8_t* src = codes.bytes.data() + t * c.channels;
        for (std::int64_t d = 0; d < c.channels; ++d)
          dst[d] = rules::dequantize_code(static_cast<std::int8_t>(src[d]), r.lo, scale);
      }
      narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * channels) + range_bytes(tokens, channels);
  }

 private:
  static std::uint64_t range_bytes(std::int64_t tokens, std::int64_t channels) {
    return channels > 0 ? static_cast<std::uint64_t>(tokens) * kRangeBytes : 0;
  }
  const kernels::CpuKernels& k_;
};

}  // namespace

std::vector<SchemeFamily> int8_token_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "int8-token",
          .device = device,
          .order = 30,
          .summary = "int8 codes (rule 7), one min/max range per token",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<Int8TokenScheme>(*kt);
          },
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_int8_token =
    register_scheme_families(int8_token_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes

// int8-group64 and int4-group64 (FlexGen-style): each token's channels split into groups of
// 64 (the last group holds the D mod 64 rest), one asymmetric min/max range per group.
// int8 uses DGQ rule 7's codes (253 levels, int8 code = q - 127); int4 uses 16 levels,
// q = clamp(rint((x - lo)*inv), 0, 15) with inv = 15/(hi - lo), packed two per byte, low
// nibble first, as one stream over the row-major elements (docs/schemes.md).
// Parts: "codes", "ranges" (per token, per group: lo, hi as fp32).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/bit_packing.hpp"
#include "schemes/kernel_families.hpp"
#include "schemes/uniform_code_runs.hpp"

namespace dgq::schemes {
namespace {

constexpr std::int64_t kGroup = 64;

std::int64_t groups_per_token(std::int64_t channels) { return (channels + kGroup - 1) / kGroup; }

class Group64Scheme final : public Scheme {
 public:
  Group64Scheme(int bits, const kernels::CpuKernels& k) : bits_(bits), k_(k) {}

  std::string spec() const override { return family(); }
  std::string family() const override { return bits_ == 8 ? "int8-group64" : "int4-group64"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const std::string name = family();
    check_input_dtype(x, name);
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t groups = groups_per_token(x.channels);
    std::vector<std::uint8_t> codes;
    BitPacker packer(codes, static_cast<std::uint64_t>(x.tokens * x.channels), bits_);
    std::vector<std::uint8_t> ranges;
    ranges.reserve(static_cast<std::size_t>(x.tokens * groups) * kRangeBytes);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    std::vector<kernels::Extremes> extremes(static_cast<std::size_t>(groups));
    const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
    non_finite_errors_first(x, name, [&] {
      for (std::int64_t t = 0; t < x.tokens && x.channels > 0; ++t) {
        // One pass: the row widened, checked and each group's extremes; a NaN/Inf gets
        // widen_row_checked's message.
        if (!k_.widen_extremes(static_cast<const std::byte*>(x.data) + t * row_bytes, x.dtype, x.channels, kGroup,
                               row.data(), extremes.data())) {
          widen_row_checked(k_, x, t, row.data(), name);
          throw std::logic_error("widen_extremes reported a NaN/Inf that widen_row_checked did not find");
        }
        for (std::int64_t g = 0; g < groups; ++g) {
          const float* group = row.data() + g * kGroup;
          const std::int64_t count = std::min(kGroup, x.channels - g * kGroup);
          const kernels::Extremes e = extremes[static_cast<std::size_t>(g)];
          const MinMax r{e.lo, e.hi};
          check_range_finite(r, name, [&] {
            return "token " + std::to_string(t) + ", channels " + std::to_string(g * kGroup) + ".." +
                   std::to_string(g * kGroup + count - 1);
          });
          const float lo = r.stored_lo(), hi = r.stored_hi();
          append_range(ranges, lo, hi);
          encode_group(group, count, lo, hi, t * x.channels + g * kGroup, codes.data(), packer);
        }
      }
    });
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"ranges", std::move(ranges)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t n = static_cast<std::uint64_t>(c.tokens * c.channels);
    const std::int64_t groups = groups_per_token(c.channels);
    const Part& codes = expect_part(c, "codes", packed_bytes(n, bits_));
    const Part& ranges = expect_part(c, "ranges", static_cast<std::uint64_t>(c.tokens * groups) * kRangeBytes);
    // A step of rows decoded into a small buffer and narrowed straight into out: one pass.
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t t = t0; t < t0 + rows; ++t) {
        for (std::int64_t g = 0; g < groups; ++g) {
          const std::int64_t first = t * c.channels + g * kGroup;
          const std::int64_t count = std::min(kGroup, c.channels - g * kGroup);
          const Range r = read_range(ranges.bytes, static_cast<std::size_t>(t * groups + g));
          decode_group(codes.bytes.data(), first, count, r, values.data() + (first - t0 * c.channels));
        }
      }
      narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    const auto n = static_cast<std::uint64_t>(tokens * channels);
    return packed_bytes(n, bits_) + static_cast<std::uint64_t>(tokens * groups_per_token(channels)) * kRangeBytes;
  }

 private:
  static constexpr int kInt4Levels = 15;

  // The stream starts zeroed and each element is written once, so a run of whole bytes is
  // stored directly (8-bit codes; 4-bit pairs from an even element), the same bytes put_run
  // would or in; other runs go through put_run.
  void encode_group(const float* x, std::int64_t count, float lo, float hi, std::int64_t first, std::uint8_t* stream,
                    BitPacker& packer) const {
    if (bits_ == 8) {
      k_.rule7_codes(x, count, lo, rules::code_inverse_step(lo, hi), stream + first);
      return;
    }
    const float inv = uniform_inverse(lo, hi, kInt4Levels);
    if (first % 2 == 0 && count % 2 == 0) {
      k_.uniform_nibbles(x, count, lo, inv, kInt4Levels, 0, stream + first / 2);
      return;
    }
    std::uint8_t q[kGroup];
    k_.uniform_codes(x, count, lo, inv, kInt4Levels, q);
    packer.put_run(static_cast<std::uint64_t>(first), q, static_cast<std::uint64_t>(count));
  }

  void decode_group(const std::uint8_t* stream, std::int64_t first, std::int64_t count, Range r, float* out) const {
    if (bits_ == 8) {
      const float scale = rules::dequant_scale(r.lo, r.hi);
      for (std::int64_t j = 0; j < count; ++j) {
        out[j] = rules::dequantize_code(static_cast<std::int8_t>(stream[first + j]), r.lo, scale);
      }
      return;
    }
    const float scale = uniform_scale(r.lo, r.hi, kInt4Levels);
    // Codes unpacked a byte at a time into a small buffer, then one loop the compiler vectorizes
    // (4-bit codes, two per byte, low nibble first: unpack_code's stream.)
    std::uint8_t q[kGroup];
    const std::int64_t n = std::min(count, kGroup);  // always count: says so to the compiler for q's bound
    std::int64_t j = 0;
    if (first % 2 == 0) {
      const std::uint8_t* in = stream + first / 2;
      for (; j + 2 <= n; j += 2, ++in) {  // the pointer walks (indexing it was 2x slower here)
        q[j] = static_cast<std::uint8_t>(*in & 15u);
        q[j + 1] = static_cast<std::uint8_t>(*in >> 4);
      }
    }
    for (; j < n; ++j) q[j] = unpack_code(stream, static_cast<std::uint64_t>(first + j), bits_);
    for (j = 0; j < n; ++j) out[j] = uniform_value(q[j], r.lo, scale);
  }

  int bits_;
  const kernels::CpuKernels& k_;
};

}  // namespace

std::vector<SchemeFamily> group64_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "int8-group64",
          .device = device,
          .order = 40,
          .summary = "int8 codes (rule 7), one min/max range per 64 channels of a token",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<Group64Scheme>(8, *kt);
          },
      },
      {
          .name = "int4-group64",
          .device = device,
          .order = 50,
          .summary = "4-bit codes, one min/max range per 64 channels of a token",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<Group64Scheme>(4, *kt);
          },
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_group64 =
    register_scheme_families(group64_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes

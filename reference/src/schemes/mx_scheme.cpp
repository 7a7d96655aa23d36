// OCP Microscaling (MX) v1.0 KV caches: mxfp4 (e2m1 elements) and mxfp8 (e4m3 elements), one e8m0
// shared scale per 32 channels of a token. Written from the OCP Microscaling Formats (MX) v1.0
// specification, section 6.3 (docs/schemes.md "MX"; docs/spec.md rules MX1-MX4): for a block of
// largest magnitude amax,
//   e = floor(log2(amax)) - emax_elem, clamped to [-127, 127] (emax_elem: e2m1 2, e4m3 8; a zero
//       block takes -127), stored as the e8m0 code e + 127;
//   code_i = element(x_i * 2^-e), rounded to nearest even and saturated to the element's largest
//       normal (6, 448);
//   x^_i = element(code_i) * 2^e.
// A partial last block (channels not a multiple of 32) is the remaining channels. Parts: "scales"
// (ceil(channels/32) e8m0 bytes per token), "codes" (mxfp4: ceil(channels/2) bytes per token, even
// channel in the low nibble; mxfp8: one e4m3 byte per value). Per-token formats: the default
// causal rule (final on append).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dgq/baselines/e8m0.hpp"
#include "dgq/baselines/fp4_e2m1.hpp"
#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

constexpr int kMxBlock = 32;
// The exponent of each element format's largest normal: 6 = 1.5 * 2^2, 448 = 1.75 * 2^8.
constexpr int kMxEmaxE2M1 = 2;
constexpr int kMxEmaxE4M3 = 8;

class MxScheme final : public Scheme {
 public:
  explicit MxScheme(bool fp4) : fp4_(fp4) {}
  std::string spec() const override { return family(); }
  std::string family() const override { return fp4_ ? "mxfp4" : "mxfp8"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const std::string name = family();
    check_input_dtype(x, name);
    Compressed c = start_compressed(spec(), x, role);
    const std::size_t code_row = code_bytes(x.channels), scale_row = block_count(x.channels);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens) * code_row, 0);
    std::vector<std::uint8_t> scales(static_cast<std::size_t>(x.tokens) * scale_row, 0);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    for (std::int64_t t = 0; t < x.tokens && x.channels > 0; ++t) {
      widen_row_checked(kernels::reference_kernels(), x, t, row.data(), name);
      encode_row(row.data(), x.channels, codes.data() + t * code_row, scales.data() + t * scale_row);
    }
    c.parts.push_back({"scales", std::move(scales)});
    c.parts.push_back({"codes", std::move(codes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t code_row = code_bytes(c.channels), scale_row = block_count(c.channels);
    const auto tokens = static_cast<std::uint64_t>(c.tokens);
    const Part& scales = expect_part(c, "scales", tokens * scale_row);
    const Part& codes = expect_part(c, "codes", tokens * code_row);
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens && c.channels > 0; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint64_t t = static_cast<std::uint64_t>(t0 + r);
        const std::uint8_t* sf = scales.bytes.data() + t * scale_row;
        const std::uint8_t* src = codes.bytes.data() + t * code_row;
        float* dst = values.data() + r * c.channels;
        for (std::int64_t d = 0; d < c.channels; ++d) {
          const std::uint8_t s = sf[d / kMxBlock];
          if (s == e8m0::kNaN) throw InputError(family() + ": stored block scale is the e8m0 NaN 0xFF (corrupt data)");
          dst[d] = std::ldexp(element(src, d), static_cast<int>(s) - e8m0::kBias);
        }
      }
      narrow_rows_into(kernels::reference_kernels(), values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens) * (code_bytes(channels) + block_count(channels));
  }

 private:
  std::uint64_t code_bytes(std::int64_t channels) const {
    const auto d = static_cast<std::uint64_t>(channels);
    return fp4_ ? (d + 1) / 2 : d;
  }
  static std::uint64_t block_count(std::int64_t channels) {
    return (static_cast<std::uint64_t>(channels) + kMxBlock - 1) / kMxBlock;
  }

  float element(const std::uint8_t* codes, std::int64_t d) const {
    if (!fp4_) return fp8::e4m3_to_float(codes[d]);
    return fp4::e2m1_to_float(d % 2 == 0 ? (codes[d / 2] & 0xfu) : (codes[d / 2] >> 4));
  }

  void encode_row(const float* v, std::int64_t n, std::uint8_t* codes, std::uint8_t* scales) const {
    for (std::int64_t b0 = 0, blk = 0; b0 < n; b0 += kMxBlock, ++blk) {
      const std::int64_t end = std::min<std::int64_t>(n, b0 + kMxBlock);
      float amax = 0.0f;
      for (std::int64_t d = b0; d < end; ++d) amax = std::max(amax, std::fabs(v[d]));
      const int e = e8m0::shared_exponent(amax, fp4_ ? kMxEmaxE2M1 : kMxEmaxE4M3);
      scales[blk] = e8m0::encode_exponent(e);
      for (std::int64_t d = b0; d < end; ++d) {
        // x * 2^-e is exact unless it falls below fp32's normal range, where it is far below the
        // element's smallest step (0.5 or 2^-9) and rounds to 0 either way.
        const float scaled = std::ldexp(v[d], -e);
        if (fp4_) {
          const std::uint8_t code = fp4::float_to_e2m1(scaled);
          codes[d / 2] |= static_cast<std::uint8_t>(d % 2 == 0 ? code : code << 4);
        } else {
          codes[d] = fp8::float_to_e4m3(scaled);
        }
      }
    }
  }

  bool fp4_;
};

[[maybe_unused]] const bool registered_mxfp4 = register_scheme_family({
    .name = "mxfp4",
    .device = Device::reference,
    .order = 230,
    .summary = "OCP MXFP4: e2m1 codes, one e8m0 shared scale per 32 channels",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<MxScheme>(true); },
});

[[maybe_unused]] const bool registered_mxfp8 = register_scheme_family({
    .name = "mxfp8",
    .device = Device::reference,
    .order = 240,
    .summary = "OCP MXFP8: e4m3 codes, one e8m0 shared scale per 32 channels",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<MxScheme>(false); },
});

}  // namespace
}  // namespace dgq::schemes

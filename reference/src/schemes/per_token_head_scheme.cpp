// vLLM's per-token-head KV caches (--kv-cache-dtype int8_per_token_head, int4_per_token_head,
// fp8_per_token_head): every token row of one KV head gets its own dynamic fp32 scale, stored
// beside its codes. Written from vLLM's Triton store kernels (docs/schemes.md, "vLLM
// per-token-head caches"; docs/spec.md rules PTH1-PTH4):
//   int8: scale = max(amax/127, 1e-6), code = trunc(clamp(x * (1/scale), -128, 127)) (Triton's
//         float-to-int8 store truncates), x^ = code * scale;
//   fp8:  scale = max(amax/448, 1e-6), code = e4m3(clamp(x * (1/scale), -448, 448)) rounded to
//         nearest even, x^ = e4m3(code) * scale;
//   int4: asymmetric over [min, max]: scale = max((max-min)/15, 1e-6), zero point zp =
//         clamp(round(-min/scale), 0, 15), code = clamp(round(fma(x, 1/scale, zp)), 0, 15)
//         (rounds half away from zero), two codes a byte (even channel low), zp hidden in the
//         low 4 mantissa bits of the stored fp32 scale; x^ = (code - zp) * (scale with those
//         bits cleared).
// Parts: "codes" (int8 / e4m3: one byte per value; int4: ceil(channels/2) bytes per token) and
// "scale" (fp32 per token; empty when the tensor has no elements). Per-token formats: the
// default causal rule (final on append).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

enum class PthFormat : std::uint8_t { int8, int4, fp8 };

// vLLM's floor on every per-token-head scale (tl.maximum(..., 1e-6)): a zero or tiny row gets a
// usable scale instead of a division by zero.
constexpr float kPthScaleFloor = 1e-6f;
// The low mantissa bits of int4's stored scale that carry the zero point.
constexpr std::uint32_t kPthZeroPointBits = 0xfu;

// Round half away from zero as vLLM's int4 kernel writes it: (v + 0.5) or (v - 0.5) in fp32,
// then truncated by the cast to int32.
float pth_round_half_away(float v) { return std::trunc(v >= 0.0f ? v + 0.5f : v - 0.5f); }

float pth_clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

class PerTokenHeadScheme final : public Scheme {
 public:
  explicit PerTokenHeadScheme(PthFormat format) : format_(format) {}
  std::string spec() const override { return name(); }
  std::string family() const override { return name(); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, name());
    Compressed c = start_compressed(spec(), x, role);
    const std::size_t row_bytes = static_cast<std::size_t>(code_bytes(x.channels));
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens) * row_bytes, 0);
    std::vector<std::uint8_t> scales;
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    non_finite_errors_first(x, name(), [&] {
      for (std::int64_t t = 0; t < x.tokens && x.channels > 0; ++t) {
        widen_row_checked(kernels::reference_kernels(), x, t, row.data(), name());
        std::uint8_t* out = codes.data() + static_cast<std::size_t>(t) * row_bytes;
        const float stored = format_ == PthFormat::int4 ? encode_int4(row.data(), x.channels, t, out)
                                                        : encode_symmetric(row.data(), x.channels, out);
        append_le(scales, stored);
      }
    });
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"scale", std::move(scales)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t row_bytes = code_bytes(c.channels);
    const Part& codes = expect_part(c, "codes", static_cast<std::uint64_t>(c.tokens) * row_bytes);
    const Part& scales = expect_part(c, "scale", scale_bytes(c.tokens, c.channels));
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens && c.channels > 0; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::size_t t = static_cast<std::size_t>(t0 + r);
        const float stored = finite_stored(read_le<float>(scales.bytes, t), "scale", t);
        decode_row(codes.bytes.data() + t * row_bytes, stored, c.channels, values.data() + r * c.channels);
      }
      narrow_rows_into(kernels::reference_kernels(), values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens) * code_bytes(channels) + scale_bytes(tokens, channels);
  }

 private:
  const char* name() const {
    switch (format_) {
      case PthFormat::int8: return "int8_per_token_head";
      case PthFormat::int4: return "int4_per_token_head";
      case PthFormat::fp8: return "fp8_per_token_head";
    }
    return "?";
  }

  std::uint64_t code_bytes(std::int64_t channels) const {
    const auto d = static_cast<std::uint64_t>(channels);
    return format_ == PthFormat::int4 ? (d + 1) / 2 : d;
  }
  static std::uint64_t scale_bytes(std::int64_t tokens, std::int64_t channels) {
    return channels > 0 ? static_cast<std::uint64_t>(tokens) * sizeof(float) : 0;
  }

  // int8 and fp8 (rules PTH1, PTH2): returns the scale as stored.
  float encode_symmetric(const float* v, std::int64_t n, std::uint8_t* out) const {
    const float qmax = format_ == PthFormat::int8 ? 127.0f : fp8::kE4M3Max;
    const float qmin = format_ == PthFormat::int8 ? -128.0f : -fp8::kE4M3Max;
    float amax = 0.0f;
    for (std::int64_t d = 0; d < n; ++d) amax = std::max(amax, std::fabs(v[d]));
    const float scale = std::max(amax / qmax, kPthScaleFloor);
    const float inv = 1.0f / scale;
    for (std::int64_t d = 0; d < n; ++d) {
      const float q = pth_clamp(v[d] * inv, qmin, qmax);
      out[d] = format_ == PthFormat::int8 ? static_cast<std::uint8_t>(static_cast<std::int8_t>(std::trunc(q)))
                                          : fp8::float_to_e4m3(q);
    }
    return scale;
  }

  // int4 (rule PTH3): returns the scale with the zero point in its low mantissa bits.
  float encode_int4(const float* v, std::int64_t n, std::int64_t t, std::uint8_t* out) const {
    float lo = v[0], hi = v[0];
    for (std::int64_t d = 1; d < n; ++d) {
      lo = std::min(lo, v[d]);
      hi = std::max(hi, v[d]);
    }
    const float width = hi - lo;
    if (!std::isfinite(width)) {
      throw InputError(std::string(name()) + ": the range of token " + std::to_string(t) +
                       " overflows fp32 (max - min is infinite)");
    }
    const float scale = std::max(width / 15.0f, kPthScaleFloor);
    const float zp = pth_clamp(pth_round_half_away(-lo / scale), 0.0f, 15.0f);
    const float inv = 1.0f / scale;
    for (std::int64_t d = 0; d < n; ++d) {
      // Triton contracts x * inv + zp into one fma (enable_fp_fusion is on by default).
      const float q = pth_clamp(pth_round_half_away(std::fma(v[d], inv, zp)), 0.0f, 15.0f);
      const auto code = static_cast<std::uint8_t>(q);
      out[d / 2] |= static_cast<std::uint8_t>(d % 2 == 0 ? code : code << 4);
    }
    const std::uint32_t bits = (rules::float_bits(scale) & ~kPthZeroPointBits) | static_cast<std::uint32_t>(zp);
    return rules::bits_float(bits);
  }

  void decode_row(const std::uint8_t* src, float stored, std::int64_t n, float* dst) const {
    switch (format_) {
      case PthFormat::int8:
        for (std::int64_t d = 0; d < n; ++d) dst[d] = static_cast<float>(static_cast<std::int8_t>(src[d])) * stored;
        return;
      case PthFormat::fp8:
        for (std::int64_t d = 0; d < n; ++d) dst[d] = fp8::e4m3_to_float(src[d]) * stored;
        return;
      case PthFormat::int4: {
        const std::uint32_t bits = rules::float_bits(stored);
        const float zp = static_cast<float>(bits & kPthZeroPointBits);
        const float scale = rules::bits_float(bits & ~kPthZeroPointBits);
        for (std::int64_t d = 0; d < n; ++d) {
          const std::uint8_t code = d % 2 == 0 ? (src[d / 2] & 0xfu) : (src[d / 2] >> 4);
          dst[d] = (static_cast<float>(code) - zp) * scale;
        }
        return;
      }
    }
  }

  PthFormat format_;
};

[[maybe_unused]] const bool registered_int8_per_token_head = register_scheme_family({
    .name = "int8_per_token_head",
    .device = Device::reference,
    .order = 180,
    .summary = "vLLM's int8_per_token_head: int8 codes, one fp32 absmax/127 scale per token (truncating store)",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> {
      return std::make_unique<PerTokenHeadScheme>(PthFormat::int8);
    },
});

[[maybe_unused]] const bool registered_int4_per_token_head = register_scheme_family({
    .name = "int4_per_token_head",
    .device = Device::reference,
    .order = 190,
    .summary = "vLLM's int4_per_token_head (without its RHT): 4-bit min/max codes per token, zero point in the "
               "fp32 scale's low bits",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> {
      return std::make_unique<PerTokenHeadScheme>(PthFormat::int4);
    },
});

[[maybe_unused]] const bool registered_fp8_per_token_head = register_scheme_family({
    .name = "fp8_per_token_head",
    .device = Device::reference,
    .order = 200,
    .summary = "vLLM's fp8_per_token_head: e4m3 codes, one fp32 absmax/448 scale per token (floor 1e-6)",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> {
      return std::make_unique<PerTokenHeadScheme>(PthFormat::fp8);
    },
});

}  // namespace
}  // namespace dgq::schemes

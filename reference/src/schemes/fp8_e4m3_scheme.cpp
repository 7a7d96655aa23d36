// fp8-e4m3 (vLLM's fp8 KV caches): code = e4m3(x/scale) rounded to nearest even and saturated to
// +-448, x^ = e4m3(code)*scale, with the scale (fp32, amax/448) of one of three kinds (key
// `scale`): `tensor` (default: one dynamic scale over the whole tensor), `token` (one per token
// row, vLLM's fp8_per_token_head) or `prefix` (one scale fixed from the first `prefix` tokens,
// as vLLM's calculate_kv_scales fixes it from its first batch; later values beyond 448*scale
// saturate). A scale of 0 (all its values zero, or amax/448 underflowing) stores code 0 for every
// value it scales. Parts: "scale" (fp32: one, or one per token with scale=token; empty when the
// tensor has no elements), "codes". Only token and prefix have a causal form (docs/spec.md,
// rule C5): a per-tensor scale is known only once the last token is.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/causal.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

enum class Fp8Scale : std::uint8_t { tensor, token, prefix };

constexpr int kDefaultPrefix = 128;  // the `prefix` key's default_text below

class Fp8E4M3Scheme final : public Scheme {
 public:
  Fp8E4M3Scheme(Fp8Scale scale, int prefix, const kernels::CpuKernels& k) : scale_(scale), prefix_(prefix), k_(k) {}
  // Keys print only when not default, so the default's spec is "fp8-e4m3" as it always was;
  // prefix only with scale=prefix (elsewhere it is ignored).
  std::string spec() const override {
    switch (scale_) {
      case Fp8Scale::tensor: return "fp8-e4m3";
      case Fp8Scale::token: return "fp8-e4m3:scale=token";
      case Fp8Scale::prefix:
        return "fp8-e4m3:scale=prefix" + (prefix_ == kDefaultPrefix ? "" : ",prefix=" + std::to_string(prefix_));
    }
    return "?";
  }
  std::string family() const override { return "fp8-e4m3"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "fp8-e4m3");
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t n = x.tokens * x.channels;
    std::vector<std::uint8_t> scale_part;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n), 0);
    if (n > 0) {
      std::vector<float> row(static_cast<std::size_t>(x.channels));
      if (scale_ == Fp8Scale::token) {
        // One pass: each row's amax, scale and codes; a NaN/Inf further on is reported before a
        // row's amax error, as when the tensor is checked first.
        non_finite_errors_first(x, "fp8-e4m3", [&] {
          for (std::int64_t t = 0; t < x.tokens; ++t) {
            const float scale = scale_for(row_amax(x, t, row.data(), 0.0f));
            append_le(scale_part, scale);
            encode_row(row.data(), x.channels, scale, codes.data() + t * x.channels);
          }
        });
      } else {
        // Two passes over the rows, each widened into one small buffer: the amax of the tensor
        // or of its first `prefix` tokens (every row checked for NaN/Inf, in row-major order),
        // then the codes.
        const std::int64_t scaled_rows =
            scale_ == Fp8Scale::prefix ? std::min<std::int64_t>(prefix_, x.tokens) : x.tokens;
        float amax = 0.0f;
        for (std::int64_t t = 0; t < x.tokens; ++t) {
          const float row_max = row_amax(x, t, row.data(), amax);
          if (t < scaled_rows) amax = row_max;
        }
        const float scale = scale_for(amax);
        append_le(scale_part, scale);
        for (std::int64_t t = 0; t < x.tokens && scale != 0.0f; ++t) {
          const float* v = row_as_float_unchecked(k_, x, t, row.data());  // checked in the first pass
          encode_row(v, x.channels, scale, codes.data() + t * x.channels);
        }
      }
    }
    c.parts.push_back({"scale", std::move(scale_part)});
    c.parts.push_back({"codes", std::move(codes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t n = static_cast<std::uint64_t>(c.tokens * c.channels);
    const Part& scale_part = expect_part(c, "scale", scale_bytes(c.tokens, c.channels));
    const Part& codes = expect_part(c, "codes", n);
    if (n == 0) return;
    std::vector<float> scales(scale_part.bytes.size() / sizeof(float));
    for (std::size_t i = 0; i < scales.size(); ++i) {
      scales[i] = finite_stored(read_le<float>(scale_part.bytes, i), "scale", i);
    }
    float table[256];
    for (int b = 0; b < 256; ++b) table[b] = fp8::e4m3_to_float(static_cast<std::uint8_t>(b));
    // A step of rows decoded into a small buffer and narrowed straight into out: one pass.
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const float scale = scales[scale_ == Fp8Scale::token ? static_cast<std::size_t>(t0 + r) : 0];
        const std::uint8_t* src = codes.bytes.data() + (t0 + r) * c.channels;
        float* dst = values.data() + r * c.channels;
        for (std::int64_t d = 0; d < c.channels; ++d) dst[d] = table[src[d]] * scale;
      }
      narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * channels) + scale_bytes(tokens, channels);
  }

  // Rule C5 (docs/spec.md, "Causal caches"): a per-token scale is final on append; a prefix
  // scale once its `prefix` tokens are there, and every token with it; a per-tensor scale never.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    check_causal();
    if (scale_ == Fp8Scale::token) return per_token_schedule(*this, x, role);
    return prefix_scale_schedule(*this, x, role, prefix_);
  }

  std::unique_ptr<Scheme> causal_form() const override {
    check_causal();
    return nullptr;
  }

  // The first `prefix` tokens wait raw for the scale (rule C5); one token waits for nothing.
  bool keeps_raw_rows(TensorRole) const override { return scale_ == Fp8Scale::prefix && prefix_ > 1; }

 private:
  std::uint64_t scale_bytes(std::int64_t tokens, std::int64_t channels) const {
    if (tokens * channels == 0) return 0;
    return sizeof(float) * static_cast<std::uint64_t>(scale_ == Fp8Scale::token ? tokens : 1);
  }

  // Row t widened into row[] and checked for NaN/Inf (widen_row_checked's message) in one pass
  // with its extremes (the kernel table's widen_extremes); returns the larger of amax and the
  // row's max |x|, which for finite values is max(|min|, |max|): the running `|x| > amax` of the
  // rule gives the same value (every operand is >= +0, fabs drops a zero's sign).
  float row_amax(ConstTensor x, std::int64_t t, float* row, float amax) const {
    const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
    kernels::Extremes e;
    if (!k_.widen_extremes(static_cast<const std::byte*>(x.data) + t * row_bytes, x.dtype, x.channels, x.channels, row,
                           &e)) {
      widen_row_checked(k_, x, t, row, "fp8-e4m3");
      throw std::logic_error("widen_extremes reported a NaN/Inf that widen_row_checked did not find");
    }
    const float lo = std::fabs(e.lo), hi = std::fabs(e.hi);
    amax = lo > amax ? lo : amax;
    return hi > amax ? hi : amax;
  }

  // amax/448 in fp32. Any finite input fits its scale (docs/schemes.md); only an amax so close
  // to FLT_MAX that 448 * scale rounds to inf could not be decoded: refused.
  static float scale_for(float amax) {
    const float scale = amax / fp8::kE4M3Max;
    if (!std::isfinite(scale * fp8::kE4M3Max))
      throw InputError("fp8-e4m3: amax " + std::to_string(amax) + " is too close to the fp32 maximum to decode");
    return scale;
  }

  // Codes of one row (float_to_e4m3 of v[d] / scale, through the kernel table); a zero scale
  // leaves them 0 (every value it scales decodes to 0).
  void encode_row(const float* v, std::int64_t n, float scale, std::uint8_t* out) const {
    if (scale == 0.0f) return;
    k_.e4m3_codes(v, n, scale, out);
  }

  void check_causal() const {
    if (scale_ == Fp8Scale::tensor) {
      throw ParameterError(
          "fp8-e4m3: scale=tensor (one scale per tensor) has no causal form; use scale=prefix (a scale fixed from the "
          "first N tokens, as vLLM's calculate_kv_scales) or scale=token");
    }
  }

  Fp8Scale scale_;
  int prefix_;
  const kernels::CpuKernels& k_;
};

void check_scale(std::string_view v) {
  if (v != "tensor" && v != "token" && v != "prefix") {
    throw ParameterError("fp8-e4m3: parameter 'scale' = '" + std::string(v) + "' is not one of tensor, token, prefix");
  }
}

using Kind = SchemeParam::Kind;
constexpr SchemeParam kFp8Params[] = {
    {"scale", Kind::word, "tensor", 0, 0, "tensor, token or prefix",
     "amax/448 over the tensor (dynamic), per token row (vLLM's fp8_per_token_head), or over the first `prefix` "
     "tokens, fixed (vLLM's calculate_kv_scales; later values saturate)",
     check_scale},
    {"prefix", Kind::integer, "128", 1, 1 << 30, "",
     "with scale=prefix: the first tokens the scale is taken from (ignored otherwise)", nullptr},
};
// vLLM's --kv-cache-dtype names of its e4m3 cache (its per-tensor scale is scale=tensor, the default).
constexpr std::string_view kFp8Aliases[] = {"fp8", "fp8_e4m3"};

}  // namespace

// Its fast path is the kernel table's fp16 conversions (tensor_io) and its widen_extremes and e4m3_codes runs.
std::vector<SchemeFamily> fp8_e4m3_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "fp8-e4m3",
          .device = device,
          .order = 60,
          .summary =
              "fp8 e4m3 codes with a dynamic scale per tensor, per token, or fixed from the first tokens (vLLM's "
              "fp8 KV caches)",
          .params = kFp8Params,
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            const std::string& scale = args.word("scale");
            const Fp8Scale kind =
                scale == "token" ? Fp8Scale::token : (scale == "prefix" ? Fp8Scale::prefix : Fp8Scale::tensor);
            return std::make_unique<Fp8E4M3Scheme>(kind, args.integer("prefix"), *kt);
          },
          .aliases = kFp8Aliases,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_fp8_e4m3 =
    register_scheme_families(fp8_e4m3_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes

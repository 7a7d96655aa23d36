// NVFP4 KV caches (vLLM --kv-cache-dtype nvfp4 and nvfp4_4over6): e2m1 codes, one e4m3 block scale
// per 16 channels of a token, and an fp32 per-tensor scale g. Written from vLLM's store kernel
// (csrc/.../nvfp4 reshape_and_cache_nvfp4_kernel with cvt_warp_fp16_to_fp4; docs/schemes.md "NVFP4";
// docs/spec.md rules NV1-NV5). With enc = 1/g, per block of amax b:
//   sf = e4m3(enc * (b * (1/6)))                        (nearest even, saturating at 448)
//   o  = sf == 0 ? 0 : 1 / (sf * (1/enc))               (the encode multiplier)
//   code_i = e2m1(x_i * o)                              (nearest even, saturating at 6)
//   x^_i = (e2m1(code_i) * sf) * g
// nvfp4_4over6 also tries the block scale of b/4 (so that the block's largest value maps to 4
// instead of 6) and keeps it when its squared reconstruction error is strictly smaller.
// g = amax/(6*448) over the tensor, a token row, or the first `prefix` tokens (key `scale`, as
// fp8-e4m3's); vLLM's cache takes it from a calibrated k_scale/v_scale fixed before serving, so the
// default is scale=prefix, which has a causal form (rule C5). Parts: "global" (fp32: one, or one
// per token with scale=token; empty for an empty tensor), "scales" (ceil(channels/16) e4m3 bytes
// per token), "codes" (ceil(channels/2) bytes per token, even channel in the low nibble).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "dgq/baselines/fp4_e2m1.hpp"
#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/causal.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

enum class Nvfp4Scale : std::uint8_t { tensor, token, prefix };

constexpr int kNvfp4Block = 16;
constexpr int kNvfp4DefaultPrefix = 128;  // the `prefix` key's default_text below
// 6 * 448: the largest e2m1 value times the largest e4m3 block scale (ModelOpt's and vLLM's
// amax/(FP4_E2M1_MAX * FP8_E4M3_MAX)).
constexpr float kNvfp4GlobalDivisor = fp4::kE2M1Max * fp8::kE4M3Max;

// One block's codes and scale byte under one candidate block scale.
struct Nvfp4Candidate {
  std::uint8_t sf = 0;
  float multiplier = 0.0f;  // o of the header comment
};

Nvfp4Candidate nvfp4_candidate(float enc, float block_max, float denominator) {
  Nvfp4Candidate c;
  c.sf = fp8::float_to_e4m3(enc * (block_max * (1.0f / denominator)));
  const float sf = fp8::e4m3_to_float(c.sf);
  c.multiplier = sf != 0.0f ? 1.0f / (sf * (1.0f / enc)) : 0.0f;
  return c;
}

// The squared error of a block under a candidate, as vLLM's nvfp4_reconstruction_error sums it on
// Blackwell (one thread per 16 values): pairs (x_2i, x_2i+1) in order, each pair's dx*dx + dy*dy
// added to the running sum; a missing partner of a partial block counts 0.
float nvfp4_block_error(const float* v, int n, const Nvfp4Candidate& c) {
  const float dequant = c.multiplier != 0.0f ? 1.0f / c.multiplier : 0.0f;
  auto diff = [&](int i) {
    if (i >= n) return 0.0f;
    if (c.multiplier == 0.0f) return v[i];
    return fp4::e2m1_to_float(fp4::float_to_e2m1(v[i] * c.multiplier)) * dequant - v[i];
  };
  float error = 0.0f;
  for (int i = 0; i < n; i += 2) {
    const float dx = diff(i), dy = diff(i + 1);
    const float pair = dx * dx + dy * dy;
    error += pair;
  }
  return error;
}

class Nvfp4Scheme final : public Scheme {
 public:
  Nvfp4Scheme(bool four_over_six, Nvfp4Scale scale, int prefix)
      : four_over_six_(four_over_six), scale_(scale), prefix_(prefix) {}

  std::string spec() const override {
    const std::string f = family();
    switch (scale_) {
      case Nvfp4Scale::tensor: return f + ":scale=tensor";
      case Nvfp4Scale::token: return f + ":scale=token";
      case Nvfp4Scale::prefix: return prefix_ == kNvfp4DefaultPrefix ? f : f + ":prefix=" + std::to_string(prefix_);
    }
    return "?";
  }
  std::string family() const override { return four_over_six_ ? "nvfp4_4over6" : "nvfp4"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const std::string name = family();
    check_input_dtype(x, name);
    Compressed c = start_compressed(spec(), x, role);
    const std::size_t code_row = code_bytes(x.channels), scale_row = block_count(x.channels);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens) * code_row, 0);
    std::vector<std::uint8_t> scales(static_cast<std::size_t>(x.tokens) * scale_row, 0);
    std::vector<std::uint8_t> global;
    if (x.tokens * x.channels > 0) {
      std::vector<float> row(static_cast<std::size_t>(x.channels));
      const auto& k = kernels::reference_kernels();
      if (scale_ == Nvfp4Scale::token) {
        non_finite_errors_first(x, name, [&] {
          for (std::int64_t t = 0; t < x.tokens; ++t) {
            widen_row_checked(k, x, t, row.data(), name);
            const float g = global_for(amax_of(row.data(), x.channels, 0.0f));
            append_le(global, g);
            encode_row(row.data(), x.channels, g, codes.data() + t * code_row, scales.data() + t * scale_row);
          }
        });
      } else {
        // Two passes, as fp8-e4m3: the amax of the tensor or of its first `prefix` tokens (every row
        // checked for NaN/Inf in row-major order), then the codes.
        const std::int64_t scaled_rows =
            scale_ == Nvfp4Scale::prefix ? std::min<std::int64_t>(prefix_, x.tokens) : x.tokens;
        float amax = 0.0f;
        for (std::int64_t t = 0; t < x.tokens; ++t) {
          widen_row_checked(k, x, t, row.data(), name);
          if (t < scaled_rows) amax = amax_of(row.data(), x.channels, amax);
        }
        const float g = global_for(amax);
        append_le(global, g);
        for (std::int64_t t = 0; t < x.tokens; ++t) {
          widen_row_checked(k, x, t, row.data(), name);
          encode_row(row.data(), x.channels, g, codes.data() + t * code_row, scales.data() + t * scale_row);
        }
      }
    }
    c.parts.push_back({"global", std::move(global)});
    c.parts.push_back({"scales", std::move(scales)});
    c.parts.push_back({"codes", std::move(codes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t code_row = code_bytes(c.channels), scale_row = block_count(c.channels);
    const auto tokens = static_cast<std::uint64_t>(c.tokens);
    const Part& global = expect_part(c, "global", global_bytes(c.tokens, c.channels));
    const Part& scales = expect_part(c, "scales", tokens * scale_row);
    const Part& codes = expect_part(c, "codes", tokens * code_row);
    if (c.tokens * c.channels == 0) return;
    std::vector<float> g(global.bytes.size() / sizeof(float));
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = finite_stored(read_le<float>(global.bytes, i), "global", i);
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint64_t t = static_cast<std::uint64_t>(t0 + r);
        const float gt = g[scale_ == Nvfp4Scale::token ? t : 0];
        const std::uint8_t* sf = scales.bytes.data() + t * scale_row;
        const std::uint8_t* src = codes.bytes.data() + t * code_row;
        float* dst = values.data() + r * c.channels;
        for (std::int64_t d = 0; d < c.channels; ++d) {
          const std::uint8_t code = d % 2 == 0 ? (src[d / 2] & 0xfu) : (src[d / 2] >> 4);
          const float block_scale = fp8::e4m3_to_float(sf[d / kNvfp4Block]);
          if (std::isnan(block_scale)) throw InputError(family() + ": stored block scale is NaN (corrupt data)");
          dst[d] = (fp4::e2m1_to_float(code) * block_scale) * gt;
        }
      }
      narrow_rows_into(kernels::reference_kernels(), values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    const auto t = static_cast<std::uint64_t>(tokens);
    return t * (code_bytes(channels) + block_count(channels)) + global_bytes(tokens, channels);
  }

  // Rule C5, as fp8-e4m3: per-token g final on append, a prefix g once its `prefix` tokens are
  // there, a per-tensor g never.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    check_causal();
    if (scale_ == Nvfp4Scale::token) return per_token_schedule(*this, x, role);
    return prefix_scale_schedule(*this, x, role, prefix_);
  }

  std::unique_ptr<Scheme> causal_form() const override {
    check_causal();
    return nullptr;
  }

  // The first `prefix` tokens wait raw for the global scale (rule C5).
  bool keeps_raw_rows(TensorRole) const override { return scale_ == Nvfp4Scale::prefix && prefix_ > 1; }

 private:
  static std::uint64_t code_bytes(std::int64_t channels) { return (static_cast<std::uint64_t>(channels) + 1) / 2; }
  static std::uint64_t block_count(std::int64_t channels) {
    return (static_cast<std::uint64_t>(channels) + kNvfp4Block - 1) / kNvfp4Block;
  }
  std::uint64_t global_bytes(std::int64_t tokens, std::int64_t channels) const {
    if (tokens * channels == 0) return 0;
    return sizeof(float) * static_cast<std::uint64_t>(scale_ == Nvfp4Scale::token ? tokens : 1);
  }

  static float amax_of(const float* v, std::int64_t n, float amax) {
    for (std::int64_t i = 0; i < n; ++i) amax = std::fabs(v[i]) > amax ? std::fabs(v[i]) : amax;
    return amax;
  }

  // g = amax/(6*448), raised to the smallest normal fp32 so that 1/g stays finite (a zero or
  // subnormal g; only fp32 inputs below 3.2e-35 reach it).
  static float global_for(float amax) { return std::max(amax / kNvfp4GlobalDivisor, FLT_MIN); }

  void encode_row(const float* v, std::int64_t n, float g, std::uint8_t* codes, std::uint8_t* scales) const {
    const float enc = 1.0f / g;
    for (std::int64_t b0 = 0, blk = 0; b0 < n; b0 += kNvfp4Block, ++blk) {
      const int len = static_cast<int>(std::min<std::int64_t>(kNvfp4Block, n - b0));
      const float block_max = amax_of(v + b0, len, 0.0f);
      Nvfp4Candidate chosen = nvfp4_candidate(enc, block_max, 6.0f);
      if (four_over_six_) {
        const Nvfp4Candidate four = nvfp4_candidate(enc, block_max, 4.0f);
        if (nvfp4_block_error(v + b0, len, four) < nvfp4_block_error(v + b0, len, chosen)) chosen = four;
      }
      scales[blk] = chosen.sf;
      for (int i = 0; i < len; ++i) {
        const std::int64_t d = b0 + i;
        const std::uint8_t code = fp4::float_to_e2m1(v[d] * chosen.multiplier);
        codes[d / 2] |= static_cast<std::uint8_t>(d % 2 == 0 ? code : code << 4);
      }
    }
  }

  void check_causal() const {
    if (scale_ == Nvfp4Scale::tensor) {
      throw ParameterError(family() +
                           ": scale=tensor (one global scale per tensor) has no causal form; use scale=prefix (a "
                           "global scale fixed from the first N tokens, as vLLM's calibrated k_scale/v_scale) or "
                           "scale=token");
    }
  }

  bool four_over_six_;
  Nvfp4Scale scale_;
  int prefix_;
};

template <bool kFourOverSix>
void check_nvfp4_scale(std::string_view v) {
  if (v != "tensor" && v != "token" && v != "prefix") {
    throw ParameterError(std::string(kFourOverSix ? "nvfp4_4over6" : "nvfp4") + ": parameter 'scale' = '" +
                         std::string(v) + "' is not one of tensor, token, prefix");
  }
}

using Kind = SchemeParam::Kind;
constexpr std::string_view kNvfp4ScaleHelp =
    "the fp32 global scale amax/(6*448): over the first `prefix` tokens, fixed (default; vLLM's calibrated "
    "k_scale/v_scale; later values saturate), per token row, or over the whole tensor (no causal form)";
constexpr std::string_view kNvfp4PrefixHelp =
    "with scale=prefix: the first tokens the global scale is taken from (ignored otherwise)";
constexpr SchemeParam kNvfp4Params[] = {
    {"scale", Kind::word, "prefix", 0, 0, "tensor, token or prefix", kNvfp4ScaleHelp, check_nvfp4_scale<false>},
    {"prefix", Kind::integer, "128", 1, 1 << 30, "", kNvfp4PrefixHelp, nullptr},
};
constexpr SchemeParam kNvfp4FourOverSixParams[] = {
    {"scale", Kind::word, "prefix", 0, 0, "tensor, token or prefix", kNvfp4ScaleHelp, check_nvfp4_scale<true>},
    {"prefix", Kind::integer, "128", 1, 1 << 30, "", kNvfp4PrefixHelp, nullptr},
};

std::unique_ptr<Scheme> make_nvfp4(const SchemeArgs& args, bool four_over_six) {
  const std::string& scale = args.word("scale");
  const Nvfp4Scale kind =
      scale == "token" ? Nvfp4Scale::token : (scale == "tensor" ? Nvfp4Scale::tensor : Nvfp4Scale::prefix);
  return std::make_unique<Nvfp4Scheme>(four_over_six, kind, args.integer("prefix"));
}

[[maybe_unused]] const bool registered_nvfp4 = register_scheme_family({
    .name = "nvfp4",
    .device = Device::reference,
    .order = 210,
    .summary = "NVFP4 (vLLM's nvfp4 KV cache): e2m1 codes, an e4m3 scale per 16 channels, an fp32 global scale",
    .params = kNvfp4Params,
    .make = [](const SchemeArgs& args) { return make_nvfp4(args, false); },
});

[[maybe_unused]] const bool registered_nvfp4_4over6 = register_scheme_family({
    .name = "nvfp4_4over6",
    .device = Device::reference,
    .order = 220,
    .summary = "vLLM's nvfp4_4over6: NVFP4 with each block's scale max/6 or max/4, whichever has the lower "
               "squared error",
    .params = kNvfp4FourOverSixParams,
    .make = [](const SchemeArgs& args) { return make_nvfp4(args, true); },
});

}  // namespace
}  // namespace dgq::schemes

// dgq3 (DGQ v3, docs/spec.md): a causal per-token cache that spends DGQ's variance signal on
// bits instead of on range boundaries. Per role (K, V), token by token:
//   W1 the row, optionally divided by per-channel scales learned from the first `calib` tokens
//      (W2, dgq3/channel_scales.hpp), is rotated with llama.cpp's Hadamard blocks;
//   W3 its width is the role's bits, or hi_bits when DGQ's token variance says the token stands
//      out (dgq3/token_widths.hpp), under a budget of hi_frac of the tokens;
//   W4 blocks of `block` channels get symmetric codes with one fp16 scale (dgq3/block_codes.hpp),
//   W8 on a Lloyd-Max grid instead of evenly spaced levels for the roles in `nl`.
// Every decision for token t reads tokens 0 .. t only: the cache is final on append (rule C8).
// Rules W0-W7 of docs/spec.md "DGQ v3".
//
// Parts (every one present, possibly empty): "codes" (rows in token order, each a little-endian
// bit stream from a byte boundary), "scales" (fp16 per block, token-major), "promoted" (bitmap,
// bit t mod 8 of byte t/8; empty when hi_frac = 0), "channel_scales" (fp32 per channel; empty
// unless the role is normalised and tokens > calib).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/dgq3_grids.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/dgq3/block_codes.hpp"
#include "schemes/dgq3/channel_scales.hpp"
#include "schemes/dgq3/token_widths.hpp"
#include "schemes/dgq3/window_mean.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

constexpr char kDgq3Name[] = "dgq3";

std::string shortest(float v) {  // reads back to the same float, so the spec round-trips
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

struct Dgq3Params {
  int kbits = 4, vbits = 4, hi_bits = 8, block = 64, calib = 32;
  bool rotate = true;
  std::string cnorm = "none";  // none, k, v, kv
  std::string center = "k";    // none, k, v, kv
  std::string nl = "none";     // none, k, v, kv: roles whose 2-5-bit codes use the Lloyd-Max grid (W8)
  int center_win = 32;
  bool pair_halves = true;  // K's RoPE pairs (d, d + D/2) share a channel scale
  float hi_frac = 0.0f, hi_ratio = 2.0f, cnorm_pow = 1.0f;

  int bits_for(TensorRole r) const { return r == TensorRole::key ? kbits : vbits; }
  static bool covers(const std::string& roles, TensorRole r) {
    return roles == "kv" || (roles == "k" && r == TensorRole::key) || (roles == "v" && r == TensorRole::value);
  }
  bool normalises(TensorRole r) const { return covers(cnorm, r); }
  bool centres(TensorRole r) const { return covers(center, r); }
  dgq3::CodeGrid grid_for(TensorRole r, int bits) const {
    return covers(nl, r) && bits >= rules::kGridLowestBits && bits <= rules::kGridHighestBits ? dgq3::CodeGrid::lloyd
                                                                                              : dgq3::CodeGrid::uniform;
  }
  std::string spec() const {
    return std::string(kDgq3Name) + ":kbits=" + std::to_string(kbits) + ",vbits=" + std::to_string(vbits) +
           ",block=" + std::to_string(block) + ",rot=" + (rotate ? "hadamard" : "none") + ",cnorm=" + cnorm +
           ",cnorm_pow=" + shortest(cnorm_pow) + ",calib=" + std::to_string(calib) + ",center=" + center +
           ",center_win=" + std::to_string(center_win) + ",pairs=" + (pair_halves ? "half" : "none") +
           ",hi_bits=" + std::to_string(hi_bits) + ",hi_frac=" + shortest(hi_frac) + ",hi_ratio=" + shortest(hi_ratio) +
           ",nl=" + nl;
  }
};

// What a role of `tokens` rows stores besides the codes (rule W7).
struct Dgq3Layout {
  std::int64_t blocks_per_row = 0;
  bool bitmap = false;
  bool channel_scales = false;
};

class Dgq3Scheme final : public Scheme {
 public:
  Dgq3Scheme(Dgq3Params p, const kernels::CpuKernels& k) : p_(std::move(p)), k_(k) {}

  std::string family() const override { return kDgq3Name; }
  std::string spec() const override { return p_.spec(); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_channels(x.channels);
    const std::vector<float> v = widen_checked(k_, x, kDgq3Name);
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t L = x.tokens, D = x.channels;
    const Dgq3Layout layout = layout_for(L, D, role);
    const std::vector<std::uint8_t> promoted = dgq3::promoted_tokens(k_, v.data(), L, D, width_rule());
    const std::vector<float> scales =
        layout.channel_scales ? dgq3::channel_scales(v.data(), p_.calib, D, pair_halves_for(role, D), p_.cnorm_pow)
                              : std::vector<float>();
    std::vector<std::uint8_t> codes(code_bytes(promoted, D, role), 0), block_scales, bitmap, channel_bytes;
    block_scales.reserve(static_cast<std::size_t>(L * layout.blocks_per_row) * 2);
    std::vector<float> row(static_cast<std::size_t>(D));
    std::uint64_t byte = 0;  // where the block's codes start: every block is whole bytes (W4)
    dgq3::WindowMean window(k_, p_.center_win, D);
    std::vector<float> mean(static_cast<std::size_t>(D)), decoded(static_cast<std::size_t>(D));
    for (std::int64_t t = 0; t < L; ++t) {
      prepare_row(v.data() + t * D, D, t, role, scales, row.data());
      if (p_.centres(role)) {
        window.mean(mean.data());
        for (std::int64_t ch = 0; ch < D; ++ch) row[ch] = row[ch] - mean[ch];
      }
      const int bits = promoted[static_cast<std::size_t>(t)] ? p_.hi_bits : p_.bits_for(role);
      const dgq3::CodeGrid grid = p_.grid_for(role, bits);
      for (std::int64_t b = 0; b < layout.blocks_per_row; ++b) {
        const float* y = row.data() + b * p_.block;
        const std::uint16_t s = dgq3::block_scale(k_, y, p_.block, bits, grid, t, b);
        block_scales.push_back(static_cast<std::uint8_t>(s & 0xffu));
        block_scales.push_back(static_cast<std::uint8_t>(s >> 8));
        dgq3::put_block_codes(k_, y, p_.block, bits, grid, s, codes.data(), byte,
                              p_.centres(role) ? decoded.data() + b * p_.block : nullptr);
        byte += static_cast<std::uint64_t>(p_.block * bits / 8);
      }
      if (p_.centres(role)) {
        for (std::int64_t ch = 0; ch < D; ++ch) decoded[ch] = mean[ch] + decoded[ch];
        window.push(decoded.data());
      }
    }
    if (layout.bitmap) {
      bitmap.assign(static_cast<std::size_t>((L + 7) / 8), 0);
      for (std::int64_t t = 0; t < L; ++t)
        if (promoted[static_cast<std::size_t>(t)])
          bitmap[static_cast<std::size_t>(t / 8)] |= std::uint8_t(1u << (t % 8));
    }
    for (const float s : scales) {
      std::uint8_t b[4];
      std::memcpy(b, &s, 4);  // little-endian hosts only (as every part of the project)
      channel_bytes.insert(channel_bytes.end(), b, b + 4);
    }
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"scales", std::move(block_scales)});
    c.parts.push_back({"promoted", std::move(bitmap)});
    c.parts.push_back({"channel_scales", std::move(channel_bytes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::int64_t L = c.tokens, D = c.channels;
    if (L > 0) check_channels(D);
    const Dgq3Layout layout = layout_for(L, D, c.role);
    const Part& bitmap = expect_part(c, "promoted", layout.bitmap ? static_cast<std::uint64_t>((L + 7) / 8) : 0);
    std::vector<std::uint8_t> promoted(static_cast<std::size_t>(L), 0);
    for (std::int64_t t = 0; layout.bitmap && t < L; ++t)
      promoted[static_cast<std::size_t>(t)] = (bitmap.bytes[static_cast<std::size_t>(t / 8)] >> (t % 8)) & 1u;
    const Part& codes = expect_part(c, "codes", code_bytes(promoted, D, c.role));
    const Part& block_scales = expect_part(c, "scales", static_cast<std::uint64_t>(L * layout.blocks_per_row) * 2);
    const Part& channel =
        expect_part(c, "channel_scales", layout.channel_scales ? static_cast<std::uint64_t>(D) * 4 : 0);
    std::vector<float> scales(layout.channel_scales ? static_cast<std::size_t>(D) : 0);
    for (std::size_t d = 0; d < scales.size(); ++d) {
      std::memcpy(&scales[d], channel.bytes.data() + 4 * d, 4);
      if (!std::isnormal(scales[d]) || scales[d] < 0.0f) {
        throw InputError(spec() + ": corrupt dgq3 data: channel scale " + std::to_string(d) +
                         " is not a positive normal float");
      }
    }
    std::vector<float> values(static_cast<std::size_t>(L * D));
    const int block_rotation = rules::hadamard_block(D, c.role == TensorRole::key);
    dgq3::WindowMean window(k_, p_.center_win, D);
    std::vector<float> mean(static_cast<std::size_t>(D));
    std::uint64_t byte = 0;  // where the block's codes start: every block is whole bytes (W4)
    for (std::int64_t t = 0; t < L; ++t) {
      const int bits = promoted[static_cast<std::size_t>(t)] ? p_.hi_bits : p_.bits_for(c.role);
      const dgq3::CodeGrid grid = p_.grid_for(c.role, bits);
      float* y = values.data() + t * D;
      for (std::int64_t b = 0; b < layout.blocks_per_row; ++b) {
        const std::size_t i = static_cast<std::size_t>(t * layout.blocks_per_row + b) * 2;
        const auto s = static_cast<std::uint16_t>(block_scales.bytes[i] | (block_scales.bytes[i + 1] << 8));
        if ((s & 0x7c00u) == 0x7c00u) {
          throw InputError(spec() + ": corrupt dgq3 data: non-finite block scale at token " + std::to_string(t));
        }
        dgq3::get_block_values(k_, codes.bytes.data(), byte, p_.block, bits, grid, s, y + b * p_.block);
        byte += static_cast<std::uint64_t>(p_.block * bits / 8);
      }
      if (p_.centres(c.role)) {
        window.mean(mean.data());
        for (std::int64_t ch = 0; ch < D; ++ch) y[ch] = mean[ch] + y[ch];
        window.push(y);
      }
      if (p_.rotate) hadamard_rotate_row(k_, y, D, block_rotation);
      if (!scales.empty() && t >= p_.calib) {
        for (std::int64_t d = 0; d < D; ++d) y[d] = y[d] * scales[static_cast<std::size_t>(d)];
      }
    }
    narrow_rows_into(k_, values.data(), out, 0, L);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole role) const override {
    // Upper bound (rule W7): as many tokens promoted as the budget could allow.
    const Dgq3Layout layout = layout_for(tokens, channels, role);
    const std::int64_t most =
        p_.hi_frac > 0.0f ? std::min<std::int64_t>(
                                tokens, static_cast<std::int64_t>(std::ceil(double(p_.hi_frac) * double(tokens))) + 1)
                          : 0;
    const std::uint64_t bits =
        static_cast<std::uint64_t>(channels) *
        (static_cast<std::uint64_t>(tokens - most) * p_.bits_for(role) + static_cast<std::uint64_t>(most) * p_.hi_bits);
    return bits / 8 + extra_bytes(tokens, channels, layout);
  }

  // Rule C8: every decision for token t reads tokens 0 .. t, so a token is final on append and
  // the bytes of a prefix are its own compression's (the promotions of the prefix are the
  // prefix of the promotions, the channel scales exist once the prefix passes calib).
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    check_channels(x.channels);
    const std::vector<float> v = widen_checked(k_, x, kDgq3Name);
    const std::vector<std::uint8_t> promoted = dgq3::promoted_tokens(k_, v.data(), x.tokens, x.channels, width_rule());
    CausalSchedule s;
    std::uint64_t code_bits = 0;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      code_bits += static_cast<std::uint64_t>(x.channels) *
                   static_cast<std::uint64_t>(promoted[static_cast<std::size_t>(t)] ? p_.hi_bits : p_.bits_for(role));
      s.final_tokens.push_back(static_cast<std::uint32_t>(t + 1));
      s.final_bytes.push_back(code_bits / 8 + extra_bytes(t + 1, x.channels, layout_for(t + 1, x.channels, role)));
    }
    return s;
  }

 private:
  dgq3::WidthRule width_rule() const { return {double(p_.hi_frac), double(p_.hi_ratio)}; }

  bool pair_halves_for(TensorRole role, std::int64_t d) const {
    return p_.pair_halves && role == TensorRole::key && d % 2 == 0;
  }

  void check_channels(std::int64_t d) const {
    if (p_.rotate && (d <= 0 || d % 64 != 0)) {
      throw InputError("dgq3: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got " +
                       std::to_string(d));
    }
    if (d <= 0 || d % p_.block != 0) {
      throw InputError("dgq3: head_dim (channels) must be a positive multiple of block = " + std::to_string(p_.block) +
                       ", got " + std::to_string(d));
    }
  }

  Dgq3Layout layout_for(std::int64_t tokens, std::int64_t channels, TensorRole role) const {
    return {channels / p_.block, p_.hi_frac > 0.0f, p_.normalises(role) && tokens > p_.calib};
  }

  std::uint64_t extra_bytes(std::int64_t tokens, std::int64_t channels, const Dgq3Layout& layout) const {
    return static_cast<std::uint64_t>(tokens * layout.blocks_per_row) * 2 +
           (layout.bitmap ? static_cast<std::uint64_t>((tokens + 7) / 8) : 0) +
           (layout.channel_scales ? static_cast<std::uint64_t>(channels) * 4 : 0);
  }

  std::uint64_t code_bytes(const std::vector<std::uint8_t>& promoted, std::int64_t d, TensorRole role) const {
    std::uint64_t bits = 0;
    for (const std::uint8_t p : promoted)
      bits += static_cast<std::uint64_t>(d) * static_cast<std::uint64_t>(p ? p_.hi_bits : p_.bits_for(role));
    return bits / 8;  // D is a multiple of 16: every row is whole bytes
  }

  // Rules W1-W2 for row t: normalise (from token calib on), rotate.
  void prepare_row(const float* x, std::int64_t d, std::int64_t t, TensorRole role, const std::vector<float>& scales,
                   float* row) const {
    std::copy(x, x + d, row);
    if (!scales.empty() && t >= p_.calib) {
      for (std::int64_t c = 0; c < d; ++c) {
        row[c] = row[c] / scales[static_cast<std::size_t>(c)];
        if (!std::isfinite(row[c])) {
          throw InputError("dgq3: value at token " + std::to_string(t) + ", channel " + std::to_string(c) +
                           " overflows fp32 once divided by its channel scale");
        }
      }
    }
    if (p_.rotate) hadamard_rotate_row(k_, row, d, rules::hadamard_block(d, role == TensorRole::key));
    for (std::int64_t c = 0; c < d; ++c) {
      if (!std::isfinite(row[c])) {
        throw InputError("dgq3: the rotated row of token " + std::to_string(t) +
                         " overflows fp32 (values near FLT_MAX)");
      }
    }
  }

  Dgq3Params p_;
  const kernels::CpuKernels& k_;
};

[[noreturn]] void dgq3_reject(std::string_view key, std::string_view value, std::string_view allowed) {
  throw ParameterError("dgq3: parameter '" + std::string(key) + "' = '" + std::string(value) + "' is not one of " +
                       std::string(allowed));
}
void check_rot(std::string_view v) {
  if (v != "none" && v != "hadamard") dgq3_reject("rot", v, "none, hadamard");
}
void check_cnorm(std::string_view v) {
  if (v != "none" && v != "k" && v != "v" && v != "kv") dgq3_reject("cnorm", v, "none, k, v, kv");
}
void check_center(std::string_view v) {
  if (v != "none" && v != "k" && v != "v" && v != "kv") dgq3_reject("center", v, "none, k, v, kv");
}
void check_nl(std::string_view v) {
  if (v != "none" && v != "k" && v != "v" && v != "kv") dgq3_reject("nl", v, "none, k, v, kv");
}
void check_pairs(std::string_view v) {
  if (v != "none" && v != "half") dgq3_reject("pairs", v, "none, half");
}

Dgq3Params parse_dgq3(const SchemeArgs& args) {
  Dgq3Params p;
  p.kbits = args.integer("kbits");
  p.vbits = args.integer("vbits");
  p.hi_bits = args.integer("hi_bits");
  p.block = args.integer("block");
  if (p.block & (p.block - 1)) dgq3_reject("block", std::to_string(p.block), "16, 32, 64, 128, 256");
  p.calib = args.integer("calib");
  p.cnorm_pow = args.number("cnorm_pow");
  p.center = args.word("center");
  p.center_win = args.integer("center_win");
  p.rotate = args.word("rot") == "hadamard";
  p.cnorm = args.word("cnorm");
  p.pair_halves = args.word("pairs") == "half";
  p.nl = args.word("nl");
  p.hi_frac = args.number("hi_frac");
  p.hi_ratio = args.number("hi_ratio");
  if (!(p.hi_frac >= 0.0f && p.hi_frac <= 1.0f)) {
    throw ParameterError("dgq3: parameter 'hi_frac' = '" + shortest(p.hi_frac) + "' is not in [0, 1]");
  }
  if (!(p.cnorm_pow >= -2.0f && p.cnorm_pow <= 2.0f)) {
    throw ParameterError("dgq3: parameter 'cnorm_pow' = '" + shortest(p.cnorm_pow) + "' is not in [-2, 2]");
  }
  if (!(p.hi_ratio >= 0.0f)) {
    throw ParameterError("dgq3: parameter 'hi_ratio' = '" + shortest(p.hi_ratio) + "' is not >= 0");
  }
  return p;
}

using Kind = SchemeParam::Kind;
constexpr SchemeParam kDgq3Params[] = {
    {"kbits", Kind::integer, "4", 2, 8, "", "key code width in bits (rule W4)", nullptr},
    {"vbits", Kind::integer, "4", 2, 8, "", "value code width in bits (rule W4)", nullptr},
    {"block", Kind::integer, "64", 16, 256, "", "channels per fp16 scale: 16, 32, 64, 128 or 256 (rule W4)", nullptr},
    {"rot", Kind::word, "hadamard", 0, 0, "none or hadamard", "llama.cpp's rotation of every row (rule W1)", check_rot},
    {"cnorm", Kind::word, "none", 0, 0, "none, k, v or kv",
     "roles divided by per-channel scales from the calibration prefix (rule W2)", check_cnorm},
    {"cnorm_pow", Kind::number, "1", 0, 0, "[-2, 2]", "channel scale = (rms / largest rms)^cnorm_pow (rule W2)",
     nullptr},
    {"center", Kind::word, "k", 0, 0, "none, k, v or kv",
     "roles coded as the difference from the mean of the previous decoded tokens (rule W5)", check_center},
    {"center_win", Kind::integer, "32", 1, 65536, "", "tokens of that mean (rule W5)", nullptr},
    {"calib", Kind::integer, "32", 1, 1 << 20, "", "tokens of the calibration prefix (rule W2)", nullptr},
    {"pairs", Kind::word, "half", 0, 0, "none or half", "K's RoPE pairs (d, d + D/2) share one channel scale (rule W2)",
     check_pairs},
    {"hi_bits", Kind::integer, "8", 2, 8, "", "code width of a promoted token (rule W3)", nullptr},
    {"hi_frac", Kind::number, "0", 0, 0, "[0, 1]", "most tokens promoted, as a share (rule W3; 0: none)", nullptr},
    {"hi_ratio", Kind::number, "2", 0, 0, ">= 0",
     "a token is promoted when its variance exceeds this times the running mean (rule W3)", nullptr},
    {"nl", Kind::word, "none", 0, 0, "none, k, v or kv",
     "roles whose 2-5-bit codes take the Lloyd-Max grid instead of evenly spaced levels (rule W8)", check_nl},
};

bool dgq3_accepts_channels(std::int64_t d) { return d > 0 && d % 64 == 0; }

}  // namespace

std::vector<SchemeFamily> dgq3_families(const kernels::CpuKernels& k, Device device) {
  return {{
      .name = kDgq3Name,
      .device = device,
      .order = 260,
      .summary = "DGQ v3: causal per-token codes; Hadamard rotation, K channel scales from a calibration prefix, "
                 "variance-promoted tokens at hi_bits",
      .params = kDgq3Params,
      .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
        return std::make_unique<Dgq3Scheme>(parse_dgq3(args), *kt);
      },
      .accepts_channels = dgq3_accepts_channels,
  }};
}

namespace {
[[maybe_unused]] const bool registered_dgq3 =
    register_scheme_families(dgq3_families(kernels::reference_kernels(), Device::reference));
}  // namespace
}  // namespace dgq::schemes

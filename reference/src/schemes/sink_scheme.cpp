// `<spec>:sink=N`: any scheme with the first N tokens of each tensor kept as they came (attention
// sinks). Part "sink" holds rows 0 .. min(N, tokens)-1 in the input dtype, bit for bit, and
// counted; the inner scheme compresses the rows after them as a tensor of its own, whose parts
// follow under their own names. Why the modifier is outermost (after rot=hadamard): a sink is
// kept as the model wrote it, never rotated and rounded (docs/spec.md, "Scheme modifier: attention
// sinks"). Why a modifier and not a key per family: the fp16 pool of KVarN and the reports of
// gpt-oss breaking with a quantized K are about the first tokens of any cache; a modifier gives
// every family, present and future, the same rule and the same accounting.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

constexpr int kMaxSinkTokens = 1 << 30;

// The value of a sink key: a canonical decimal integer in [0, 2^30] (no sign, no leading zero),
// so that the spec a scheme prints is the one it was made from.
int parse_sink_tokens(std::string_view v) {
  int n = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  const bool canonical = !v.empty() && (v.size() == 1 || v.front() != '0');
  if (ec != std::errc{} || end != v.data() + v.size() || !canonical || n < 0 || n > kMaxSinkTokens) {
    throw ParameterError("parameter 'sink' = '" + std::string(v) + "' is not an integer in [0, " +
                         std::to_string(kMaxSinkTokens) + "] (tokens kept in the input dtype)");
  }
  return n;
}

// Rows first .. first+count-1 of x as a tensor of their own (rows are contiguous).
ConstTensor rows_of(ConstTensor x, std::int64_t first, std::int64_t count) {
  const auto* bytes = static_cast<const std::uint8_t*>(x.data);
  const std::size_t offset = static_cast<std::size_t>(first * x.channels) * dtype_size(x.dtype);
  return ConstTensor{bytes == nullptr ? nullptr : bytes + offset, x.dtype, count, x.channels};
}

class SinkTokensScheme final : public Scheme {
 public:
  SinkTokensScheme(std::unique_ptr<Scheme> inner, int sinks) : inner_(std::move(inner)), sinks_(sinks) {
    spec_ = spec_with_key(inner_->spec(), "sink", std::to_string(sinks_));
  }

  std::string spec() const override { return spec_; }
  std::string family() const override { return inner_->family(); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    // Every row is checked here, so that the first NaN/Inf is named by its token in x (the inner
    // scheme would count from the first token after the sinks).
    check_finite(x, spec_);
    const std::int64_t kept = sink_rows(x.tokens);
    Compressed inner = inner_->compress(rows_of(x, kept, x.tokens - kept), role);
    Compressed c = start_compressed(spec_, x, role);
    const ConstTensor sink = rows_of(x, 0, kept);
    const auto* bytes = static_cast<const std::uint8_t*>(sink.data);
    c.parts.push_back({"sink", bytes == nullptr ? std::vector<std::uint8_t>{}
                                                : std::vector<std::uint8_t>(bytes, bytes + sink.bytes())});
    for (Part& p : inner.parts) c.parts.push_back(std::move(p));
    c.diagnostics = std::move(inner.diagnostics);
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec_);
    const std::int64_t kept = sink_rows(c.tokens);
    const std::size_t sink_bytes = static_cast<std::size_t>(kept * c.channels) * dtype_size(c.dtype);
    // The sink is the first part and the inner scheme's parts are the rest, taken by position:
    // an inner family may name a part "sink" too (kvarn's own sink block).
    if (c.parts.empty() || c.parts.front().name != "sink") throw InputError(spec_ + ": part 'sink' is missing");
    const Part& sink = expect_part(c, "sink", sink_bytes);
    if (sink_bytes > 0) std::memcpy(out.data, sink.bytes.data(), sink_bytes);
    Compressed inner = c;
    inner.scheme = inner_->spec();
    inner.tokens = c.tokens - kept;
    inner.parts.assign(c.parts.begin() + 1, c.parts.end());
    auto* rest = static_cast<std::uint8_t*>(out.data);
    inner_->decompress(inner,
                       MutTensor{rest == nullptr ? nullptr : rest + sink_bytes, out.dtype, inner.tokens, out.channels});
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    const std::int64_t kept = sink_rows(tokens);
    return static_cast<std::uint64_t>(kept * channels) * dtype_size(dtype) +
           inner_->planned_bytes(tokens - kept, channels, dtype, role);
  }

  // Rule C6 (docs/spec.md, "Causal caches"): a sink is final on append (it is stored as it came);
  // after the sinks, the inner scheme's schedule of the rows after them, shifted by N.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    check_finite(x, spec_);
    const std::int64_t kept = sink_rows(x.tokens);
    // Asked even when every token is a sink, so that an inner scheme without a causal form is
    // refused for every tensor, as it is without the modifier.
    const CausalSchedule rest = inner_->causal_schedule(rows_of(x, kept, x.tokens - kept), role);
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(x.channels) * dtype_size(x.dtype);
    CausalSchedule s;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      if (t < kept) {
        s.final_tokens.push_back(static_cast<std::uint32_t>(t + 1));
        s.final_bytes.push_back(static_cast<std::uint64_t>(t + 1) * row_bytes +
                                inner_->planned_bytes(0, x.channels, x.dtype, role));
      } else {
        const auto i = static_cast<std::size_t>(t - kept);
        s.final_tokens.push_back(static_cast<std::uint32_t>(kept + rest.final_tokens[i]));
        s.final_bytes.push_back(static_cast<std::uint64_t>(kept) * row_bytes + rest.final_bytes[i]);
      }
    }
    return s;
  }

  std::unique_ptr<Scheme> causal_form() const override {
    std::unique_ptr<Scheme> inner = inner_->causal_form();
    if (inner == nullptr) return nullptr;
    return std::make_unique<SinkTokensScheme>(std::move(inner), sinks_);
  }

  // The sinks are stored as they came (rule C9).
  bool keeps_raw_rows(TensorRole role) const override { return sinks_ > 0 || inner_->keeps_raw_rows(role); }

 private:
  std::int64_t sink_rows(std::int64_t tokens) const { return std::min<std::int64_t>(sinks_, tokens); }

  std::unique_ptr<Scheme> inner_;
  int sinks_;
  std::string spec_;
};

// `sink` is a modifier of every family (dgq/registry.hpp), outermost: order 20, after rot's 10.
[[maybe_unused]] const bool registered_sink_tokens = register_scheme_modifier({
    .key = "sink",
    .default_value = "0",
    .values = "integer [0, 1073741824]",
    .help = "the first N tokens kept in the input dtype, counted (attention sinks; docs/spec.md)",
    .check = [](std::string_view v) { parse_sink_tokens(v); },
    .wrap = [](std::unique_ptr<Scheme> inner, const std::string& value, Device) -> std::unique_ptr<Scheme> {
      return std::make_unique<SinkTokensScheme>(std::move(inner), parse_sink_tokens(value));
    },
    .order = 20,
});

}  // namespace

}  // namespace dgq::schemes

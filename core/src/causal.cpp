// The causal cache's two readers of a family's rule (dgq/causal.hpp): the whole-chunk timeline
// and the literal append/read cache.
#include "dgq/causal.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "dgq/errors.hpp"

namespace dgq {
namespace {

const Scheme& form_of(const Scheme& s, std::unique_ptr<Scheme>& owned) {
  owned = s.causal_form();
  return owned ? *owned : s;
}

// form's compress of x, decoded in x's dtype and widened to fp32.
std::vector<float> decoded(const Scheme& form, ConstTensor x, TensorRole role) {
  const Compressed c = form.compress(x, role);
  std::vector<std::uint8_t> out(x.bytes());
  MutTensor view{out.data(), x.dtype, x.tokens, x.channels};
  form.decompress(c, view);
  return to_float(ConstTensor{out.data(), x.dtype, x.tokens, x.channels});
}

}  // namespace

CausalSchedule Scheme::causal_schedule(ConstTensor x, TensorRole role) const {
  return per_token_schedule(*this, x, role);
}

CausalSchedule per_token_schedule(const Scheme& s, ConstTensor x, TensorRole role) {
  CausalSchedule out;
  out.final_tokens.resize(static_cast<std::size_t>(x.tokens));
  out.final_bytes.resize(out.final_tokens.size());
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    out.final_tokens[static_cast<std::size_t>(t)] = static_cast<std::uint32_t>(t + 1);
    out.final_bytes[static_cast<std::size_t>(t)] = s.planned_bytes(t + 1, x.channels, x.dtype, role);
  }
  return out;
}

CausalSchedule prefix_scale_schedule(const Scheme& s, ConstTensor x, TensorRole role, std::int64_t prefix) {
  CausalSchedule out;
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    const std::int64_t final_tokens = t + 1 >= prefix ? t + 1 : 0;
    out.final_tokens.push_back(static_cast<std::uint32_t>(final_tokens));
    out.final_bytes.push_back(s.planned_bytes(final_tokens, x.channels, x.dtype, role));
  }
  return out;
}

std::uint64_t causal_held_bytes(const CausalSchedule& s, std::int64_t t, std::int64_t channels, DType dtype) {
  const auto at = static_cast<std::size_t>(t);
  const auto raw = static_cast<std::uint64_t>(t + 1 - static_cast<std::int64_t>(s.final_tokens[at]));
  return s.final_bytes[at] + raw * static_cast<std::uint64_t>(channels) * dtype_size(dtype);
}

DType cache_row_dtype(const Scheme& s, TensorRole role, DType rows, std::optional<DType> raw_dtype) {
  return raw_dtype && s.keeps_raw_rows(role) ? *raw_dtype : rows;
}

CausalTimeline causal_timeline(const Scheme& s, ConstTensor x, TensorRole role, std::optional<DType> raw_dtype) {
  CausalTimeline t;
  t.row_dtype = cache_row_dtype(s, role, x.dtype, raw_dtype);
  std::vector<std::uint8_t> converted;
  if (t.row_dtype != x.dtype) {
    check_finite(x, "causal cache");
    x = convert_tensor(x, t.row_dtype, converted, "causal cache");
  }
  t.held_rows = to_float(x);
  t.schedule = s.causal_schedule(x, role);
  std::unique_ptr<Scheme> owned;
  t.final_values = decoded(form_of(s, owned), x, role);
  return t;
}

CausalCache::CausalCache(const Scheme& scheme, TensorRole role, std::int64_t channels, DType dtype,
                         std::optional<DType> raw_dtype)
    : scheme_(scheme),
      role_(role),
      channels_(channels),
      input_dtype_(dtype),
      dtype_(cache_row_dtype(scheme, role, dtype, raw_dtype)) {
  form_ = &form_of(scheme_, owned_form_);
}

void CausalCache::append(ConstTensor rows) {
  if (rows.channels != channels_ || rows.dtype != input_dtype_)
    throw InputError("causal cache: appended rows of " + std::to_string(rows.channels) + " channels (" +
                     std::string(dtype_name(rows.dtype)) + "), the cache takes " + std::to_string(channels_) + " (" +
                     std::string(dtype_name(input_dtype_)) + ")");
  // NaN/Inf is refused on append, whichever family: a row that stays raw for a while would
  // otherwise be held until it becomes final, and only then be refused, by a later append.
  check_finite(rows, "causal cache", tokens_);
  std::vector<std::uint8_t> converted;
  rows = convert_tensor(rows, dtype_, converted, "causal cache", tokens_);  // rule C9
  const auto* bytes = static_cast<const std::uint8_t*>(rows.data);
  const std::size_t raw_before = raw_.size();
  const std::int64_t tokens_before = tokens_;
  raw_.insert(raw_.end(), bytes, bytes + rows.bytes());
  tokens_ += rows.tokens;
  // A refused append (bad data: the scheme's InputError) leaves the cache as it was.
  try {
    settle_final_tokens();
  } catch (...) {
    raw_.resize(raw_before);
    tokens_ = tokens_before;
    throw;
  }
}

// Asks the schedule how many tokens are final now and stores the newly final ones; members
// change only once every check passed.
void CausalCache::settle_final_tokens() {
  if (tokens_ == 0) return;
  const ConstTensor all{raw_.data(), dtype_, tokens_, channels_};
  const CausalSchedule s = scheme_.causal_schedule(all, role_);
  const auto now = static_cast<std::int64_t>(s.final_tokens.back());
  if (now < final_) throw std::logic_error(scheme_.spec() + ": causal schedule took back final tokens");
  if (now > final_) {
    const ConstTensor prefix{raw_.data(), dtype_, now, channels_};
    const Compressed c = form_->compress(prefix, role_);
    if (c.total_bytes() != s.final_bytes.back())
      throw std::logic_error(scheme_.spec() + ": causal schedule counts " + std::to_string(s.final_bytes.back()) +
                             " bytes for " + std::to_string(now) + " final tokens, the causal form stores " +
                             std::to_string(c.total_bytes()));
    std::vector<std::uint8_t> out(prefix.bytes());
    form_->decompress(c, MutTensor{out.data(), dtype_, now, channels_});
    const std::vector<float> values = to_float(ConstTensor{out.data(), dtype_, now, channels_});
    const std::size_t kept = static_cast<std::size_t>(final_ * channels_);
    if (std::memcmp(values.data(), final_values_.data(), kept * sizeof(float)) != 0)
      throw std::logic_error(scheme_.spec() + ": the causal form changed a final token's value (its rule looks ahead)");
    final_values_.assign(values.begin(), values.end());
    final_ = now;
  }
  final_bytes_ = s.final_bytes.back();
}

void CausalCache::read(std::vector<float>& out) const {
  out.resize(static_cast<std::size_t>(tokens_ * channels_));
  read(out.data());
}

void CausalCache::read(float* out) const {
  if (!final_values_.empty()) std::memcpy(out, final_values_.data(), final_values_.size() * sizeof(float));
  if (tokens_ > final_) {
    const std::size_t offset = static_cast<std::size_t>(final_ * channels_) * dtype_size(dtype_);
    to_float(ConstTensor{raw_.data() + offset, dtype_, tokens_ - final_, channels_},
             out + static_cast<std::size_t>(final_ * channels_));
  }
}

std::uint64_t CausalCache::held_bytes() const {
  return final_bytes_ + static_cast<std::uint64_t>((tokens_ - final_) * channels_) * dtype_size(dtype_);
}

}  // namespace dgq

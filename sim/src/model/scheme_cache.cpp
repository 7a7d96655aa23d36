// The KV cache of `dgq eval`: every layer's K (after RoPE) and V, per KV head, compressed by a
// scheme and decompressed again, so attention reads what a quantized cache would hold.
#include <cstring>

#include "dgq/errors.hpp"
#include "dgq/sim/eval.hpp"

namespace dgq::sim {
namespace {

// fp32 -> fp16 (nearest-even) -> fp32, in place.
void round_to_fp16(float* values, std::int64_t count) {
  std::vector<std::uint16_t> half(static_cast<std::size_t>(count));
  from_float(values, MutTensor{half.data(), DType::f16, 1, count});
  const std::vector<float> back = to_float(ConstTensor{half.data(), DType::f16, 1, count});
  std::memcpy(values, back.data(), back.size() * sizeof(float));
}

}  // namespace

QueryRounding parse_query_rounding(const std::string& name) {
  if (name == "off") return QueryRounding::off;
  if (name == "q8_0") return QueryRounding::q8_0;
  throw ParameterError("--query-rounding '" + name + "': expected off or q8_0");
}

SchemeCache::SchemeCache(const std::string& spec, QueryRounding rounding) : rounding_(rounding) {
  if (spec != "fp32") {
    owned_ = make_scheme(spec);
    scheme_ = owned_.get();
    stores_fp16_ = owned_->family() == "fp16";
  }
  if (rounding_ == QueryRounding::q8_0) q8_0_ = make_scheme("q8_0");
}

SchemeCache::SchemeCache(const Scheme* scheme, bool stores_fp16, QueryRounding rounding)
    : scheme_(scheme), stores_fp16_(stores_fp16), rounding_(rounding) {
  if (rounding_ == QueryRounding::q8_0) q8_0_ = make_scheme("q8_0");
}

void SchemeCache::pass_through(std::vector<float>& x, std::int64_t tokens, TensorRole role) {
  const std::int64_t d = head_dim;
  const std::int64_t heads = static_cast<std::int64_t>(x.size()) / (tokens * d);
  elements_ += x.size();
  if (scheme_ == nullptr) {
    bytes_ += x.size() * sizeof(float);
    return;
  }
  for (std::int64_t h = 0; h < heads; ++h) {
    float* head = x.data() + h * tokens * d;
    if (stores_fp16_) {
      std::vector<std::uint16_t> half(static_cast<std::size_t>(tokens * d));
      MutTensor half_view{half.data(), DType::f16, tokens, d};
      from_float(head, half_view);
      const Compressed c = scheme_->compress(half_view, role);
      bytes_ += c.total_bytes();
      scheme_->decompress(c, half_view);
      const std::vector<float> back = to_float(half_view);
      std::memcpy(head, back.data(), back.size() * sizeof(float));
    } else {
      const Compressed c = scheme_->compress(ConstTensor{head, DType::f32, tokens, d}, role);
      bytes_ += c.total_bytes();
      scheme_->decompress(c, MutTensor{head, DType::f32, tokens, d});
    }
  }
}

void SchemeCache::store(std::int64_t, std::int64_t tokens, std::vector<float>& k, std::vector<float>& v) {
  pass_through(k, tokens, TensorRole::key);
  pass_through(v, tokens, TensorRole::value);
}

void SchemeCache::round_queries(std::int64_t tokens, std::vector<float>& q) {
  // ggml converts Q to the K cache's vec_dot type: none for f32, f16 for an f16 cache, q8_0
  // for the quantized cache types.
  if (rounding_ == QueryRounding::off || scheme_ == nullptr) return;
  if (stores_fp16_) {
    round_to_fp16(q.data(), static_cast<std::int64_t>(q.size()));
    return;
  }
  const std::int64_t d = head_dim;
  const std::int64_t heads = static_cast<std::int64_t>(q.size()) / (tokens * d);
  for (std::int64_t h = 0; h < heads; ++h) {
    MutTensor head{q.data() + h * tokens * d, DType::f32, tokens, d};
    q8_0_->decompress(q8_0_->compress(head, TensorRole::key), head);
  }
}

}  // namespace dgq::sim

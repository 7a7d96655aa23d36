// The KV cache of `dgq eval`: every layer's K (after RoPE, or before it with --keys pre-rope) and
// V, per KV head, compressed by a scheme (the layer's own in a layer plan) and decompressed
// again, so attention reads what a quantized cache would hold.
#include <algorithm>
#include <cstring>
#include <optional>

#include "cache/layer_plan.hpp"
#include "cache/scheme_cache_decoder.hpp"
#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "dgq/sim/metrics/attention.hpp"

namespace dgq::sim {
namespace {

// fp32 -> fp16 (nearest-even) -> fp32, in place.
void round_to_fp16(float* values, std::int64_t count) {
  std::vector<std::uint16_t> half(static_cast<std::size_t>(count));
  from_float(values, MutTensor{half.data(), DType::f16, 1, count});
  const std::vector<float> back = to_float(ConstTensor{half.data(), DType::f16, 1, count});
  std::memcpy(values, back.data(), back.size() * sizeof(float));
}

// Rows lo..pos of KV head g: stored below final_tokens, raw from there.
void mix_rows(const std::vector<float>& stored, const std::vector<float>& raw, std::int64_t g, std::int64_t tokens,
              std::int64_t d, std::int64_t lo, std::int64_t pos, std::uint32_t final_tokens, std::vector<float>& out) {
  out.resize(static_cast<std::size_t>((pos - lo + 1) * d));
  for (std::int64_t j = lo; j <= pos; ++j) {
    const float* src = (j < static_cast<std::int64_t>(final_tokens) ? stored : raw).data() + (g * tokens + j) * d;
    std::copy(src, src + d, out.data() + (j - lo) * d);
  }
}

}  // namespace

SchemeCache::Sides SchemeCache::make_sides(const std::string& spec) {
  Sides sides;
  const std::optional<KvPairSpec> pair = split_kv_pair_spec(spec);
  const std::string side_specs[2] = {pair ? pair->k : spec, pair ? pair->v : spec};
  for (int r = 0; r < 2; ++r) {
    if (names_exact_cache(side_specs[r])) continue;
    Side& s = sides.role[r];
    s.owned = make_scheme(side_specs[r]);
    s.scheme = s.owned.get();
    const SchemeFamily* family = find_scheme_family(s.owned->family(), Device::cpu);
    s.stores_fp16 = family != nullptr && family->stores_input_bytes;
  }
  return sides;
}

bool SchemeCache::keeps_raw_rows(const std::string& spec) {
  std::vector<std::string> specs{spec};
  if (const std::optional<LayerPlan> plan = split_layer_plan(spec)) {
    specs = {plan->default_spec};
    for (const LayerOverride& o : plan->overrides) specs.push_back(o.spec);
  }
  for (const std::string& s : specs) {
    const Sides sides = make_sides(s);
    for (TensorRole role : {TensorRole::key, TensorRole::value}) {
      const Side& side = sides.role[role_index(role)];
      if (side.scheme != nullptr && side.scheme->keeps_raw_rows(role)) return true;
    }
  }
  return false;
}

SchemeCache::SchemeCache(const std::string& spec, QueryRounding rounding, CacheMode mode, KeyPosition keys,
                         DType raw_dtype)
    : rounding_(rounding), mode_(mode), keys_(keys), raw_dtype_(raw_dtype) {
  const std::optional<LayerPlan> plan = split_layer_plan(spec);
  plan_.push_back(make_sides(plan ? plan->default_spec : spec));
  if (plan) {
    for (const LayerOverride& o : plan->overrides) {
      plan_.push_back(make_sides(o.spec));
      for (const std::int64_t l : o.layers) {
        if (static_cast<std::size_t>(l) >= layer_sides_.size()) layer_sides_.resize(static_cast<std::size_t>(l) + 1, 0);
        layer_sides_[static_cast<std::size_t>(l)] = plan_.size() - 1;
      }
    }
  }
  if (rounding_ == QueryRounding::q8_0) q8_0_ = make_scheme("q8_0");
}

SchemeCache::SchemeCache(const Scheme* scheme, bool stores_fp16, QueryRounding rounding, CacheMode mode,
                         KeyPosition keys, DType raw_dtype)
    : rounding_(rounding), mode_(mode), keys_(keys), raw_dtype_(raw_dtype) {
  Sides sides;
  for (Side& s : sides.role) {
    s.scheme = scheme;
    s.stores_fp16 = stores_fp16;
  }
  plan_.push_back(std::move(sides));
  if (rounding_ == QueryRounding::q8_0) q8_0_ = make_scheme("q8_0");
}

void SchemeCache::pass_through(std::vector<float>& x, std::int64_t layer, std::int64_t tokens, TensorRole role) {
  const std::int64_t d = config->head_dim;
  const std::int64_t heads = static_cast<std::int64_t>(x.size()) / (tokens * d);
  const std::uint64_t bytes_before = bytes_;
  const Side& s = side(layer, role);
  elements_ += x.size();
  held_elements_sum_ += x.size();
  if (s.scheme == nullptr) {
    count_bytes(role, x.size() * sizeof(float));
    held_bytes_sum_ += x.size() * sizeof(float);
    return;
  }
  // The scheme's input (rule C9 for a role that keeps rows raw: the raw dtype; fp16 for the fp16
  // family; else the K/V as computed), decoded in that dtype and widened back.
  const DType row_dtype = cache_row_dtype(*s.scheme, role, s.input_dtype(), raw_dtype_);
  std::vector<std::uint8_t> narrow;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* head = x.data() + h * tokens * d;
    if (row_dtype != DType::f32) {
      const ConstTensor computed{head, DType::f32, tokens, d};
      check_finite(computed, s.scheme->spec());
      (void)convert_tensor(computed, row_dtype, narrow, s.scheme->spec());
      const MutTensor rows{narrow.data(), row_dtype, tokens, d};
      const Compressed c = s.scheme->compress(rows, role);
      count_bytes(role, c.total_bytes());
      s.scheme->decompress(c, rows);
      to_float(rows, head);
    } else {
      const Compressed c = s.scheme->compress(ConstTensor{head, DType::f32, tokens, d}, role);
      count_bytes(role, c.total_bytes());
      s.scheme->decompress(c, MutTensor{head, DType::f32, tokens, d});
    }
  }
  held_bytes_sum_ += bytes_ - bytes_before;
}

void SchemeCache::reset_counters() {
  bytes_ = elements_ = held_bytes_sum_ = held_elements_sum_ = 0;
  role_bytes_[0] = role_bytes_[1] = 0;
  reset_decoder();
  kl_sums_.assign(static_cast<std::size_t>(config->num_layers), 0.0);
  kl_counts_.assign(static_cast<std::size_t>(config->num_layers), 0);
}

void SchemeCache::store(std::int64_t layer, std::int64_t tokens, std::vector<float>& k, std::vector<float>& v,
                        const RopeKeys& rope_keys) {
  const bool pre_rope = keys_ == KeyPosition::pre_rope;
  const std::int64_t heads = static_cast<std::int64_t>(k.size()) / (tokens * config->head_dim);
  exact_k_ = k;  // the probes compare attention weights: the keys are all they read
  if (pre_rope) rope_keys(exact_k_.data(), heads, tokens, 0);
  const bool causal = mode_ == CacheMode::causal && !exact();
  if (causal) {
    pass_causally(k, layer, tokens, TensorRole::key, causal_.raw_k, causal_.final_k);
    pass_causally(v, layer, tokens, TensorRole::value, causal_.raw_v, causal_.final_v);
  } else {
    pass_through(k, layer, tokens, TensorRole::key);
    pass_through(v, layer, tokens, TensorRole::value);
  }
  if (pre_rope) {  // what attention reads: the stored keys and the raw tail, rotated after the cache
    rope_keys(k.data(), heads, tokens, 0);
    if (causal) rope_keys(causal_.raw_k.data(), heads, tokens, 0);
  }
  cached_k_ = k;
}

void SchemeCache::queries(std::int64_t layer, std::int64_t tokens, std::vector<float>& q) {
  // ggml converts Q to the K cache's vec_dot type: none for f32, f16 for an f16 cache, q8_0
  // for the quantized cache types.
  const Side& keys = side(layer, TensorRole::key);
  if (rounding_ == QueryRounding::q8_0 && keys.scheme != nullptr) {
    if (keys.stores_fp16) {
      round_to_fp16(q.data(), static_cast<std::int64_t>(q.size()));
    } else {
      const std::int64_t d = config->head_dim;
      const std::int64_t heads = static_cast<std::int64_t>(q.size()) / (tokens * d);
      for (std::int64_t h = 0; h < heads; ++h) {
        MutTensor head{q.data() + h * tokens * d, DType::f32, tokens, d};
        q8_0_->decompress(q8_0_->compress(head, TensorRole::key), head);
      }
    }
  }
  if (!decoder_) probe_attention(layer, tokens, q);  // the decoder keeps no exact K/V to probe against
}

// The replay's attention metric (docs/replay.md) inside the model: for probe queries (every
// probe_stride-th position from first_probe), KL between the attention over the exact
// K/V of this layer and over the cache's, with the replay's fp64 code; local layers attend
// their window only.
void SchemeCache::probe_attention(std::int64_t layer, std::int64_t tokens, const std::vector<float>& q) {
  const ModelConfig& c = *config;
  const std::int64_t d = c.head_dim, group = c.num_q_heads / c.num_kv_heads;
  const std::int64_t window = c.is_local_layer(layer) ? c.sliding_window : 0;
  std::int64_t probes = first_probe < tokens ? (tokens - first_probe + probe_stride - 1) / probe_stride : 0;
  const CausalKv* view = causal_kv(layer);  // the cache as it was when each probe's token was appended
  // Heads in parallel, each probe's KL into its own slot; summed below in (head, probe) order,
  // so the result does not depend on the thread count.
  std::vector<double> kl(static_cast<std::size_t>(c.num_q_heads * probes));
  if (side(layer, TensorRole::key).scheme == nullptr && view == nullptr) probes = 0;  // exact keys: every KL is 0
#pragma omp parallel
  {
    // Only the two distributions: the KL needs neither the outputs nor the top keys.
    std::vector<double> logits, p_exact, p_cached;
    std::vector<float> mixed_k;
#pragma omp for schedule(dynamic)
    for (std::int64_t h = 0; h < c.num_q_heads; ++h) {
      const std::int64_t g = h / group;
      for (std::int64_t t = 0; t < probes; ++t) {
        const std::int64_t pos = first_probe + t * probe_stride;
        const std::int64_t lo = window > 0 ? std::max<std::int64_t>(0, pos - window + 1) : 0, n = pos - lo + 1;
        const float* qrow = q.data() + (h * tokens + pos) * d;
        const std::size_t off = static_cast<std::size_t>((g * tokens + lo) * d);
        attention_logits(qrow, exact_k_.data() + off, n, d, logits);
        softmax(logits, p_exact);
        if (view != nullptr) {
          const auto at = static_cast<std::size_t>(g * tokens + pos);
          mix_rows(cached_k_, view->raw_k, g, tokens, d, lo, pos, view->final_k[at], mixed_k);
          attention_logits(qrow, mixed_k.data(), n, d, logits);
        } else {
          attention_logits(qrow, cached_k_.data() + off, n, d, logits);
        }
        softmax(logits, p_cached);
        kl[static_cast<std::size_t>(h * probes + t)] = kl_divergence(p_exact, p_cached);
      }
    }
  }
  for (const double value : kl) kl_sums_[static_cast<std::size_t>(layer)] += value;
  kl_counts_[static_cast<std::size_t>(layer)] += static_cast<std::int64_t>(kl.size());
}

}  // namespace dgq::sim

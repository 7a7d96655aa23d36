// The causal side of `dgq eval`'s cache (docs/eval.md, "The causal cache"): the one-pass view
// (each family's causal timeline, dgq/causal.hpp) and the literal decoder's caches (one
// dgq::CausalCache per layer x KV head x role).
#include <cstring>
#include <stdexcept>

#include "cache/scheme_cache_decoder.hpp"
#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"

namespace dgq::sim {

namespace {
std::size_t slot(std::int64_t layer, std::int64_t heads, std::int64_t h, TensorRole role) {
  return static_cast<std::size_t>((layer * heads + h) * 2 + SchemeCache::role_index(role));
}
}  // namespace

SchemeCache::~SchemeCache() = default;

void SchemeCache::reset_decoder() { decoder_.reset(); }

void SchemeCache::check_causal_rule() const {
  const auto highest_planned_layer = static_cast<std::int64_t>(layer_sides_.size()) - 1;
  if (highest_planned_layer >= config->num_layers)
    throw ParameterError("layer plan: layer " + std::to_string(highest_planned_layer) + " is past the model's last (" +
                         config->name + " has " + std::to_string(config->num_layers) + " layers, 0-" +
                         std::to_string(config->num_layers - 1) + ")");
  if (mode_ != CacheMode::causal) return;
  const std::vector<std::uint8_t> zeros(static_cast<std::size_t>(config->head_dim) * sizeof(float), 0);
  for (const Sides& sides : plan_)
    for (TensorRole role : {TensorRole::key, TensorRole::value}) {
      const Side& s = sides.role[role_index(role)];
      if (s.scheme != nullptr)
        (void)s.scheme->causal_schedule(ConstTensor{zeros.data(), s.input_dtype(), 1, config->head_dim}, role);
    }
}

const CausalKv* SchemeCache::causal_kv(std::int64_t) const {
  return mode_ == CacheMode::causal && !exact() ? &causal_ : nullptr;
}

// Every KV head of x through the family's causal timeline: x becomes the values each token is
// final with, raw the rows as the cache holds them while raw (rule C9: in the raw dtype for a
// role that keeps rows raw), final_tokens each head's schedule; the held bytes of every time go
// into the counters.
void SchemeCache::pass_causally(std::vector<float>& x, std::int64_t layer, std::int64_t tokens, TensorRole role,
                                std::vector<float>& raw, std::vector<std::uint32_t>& final_tokens) {
  const std::int64_t d = config->head_dim;
  const std::int64_t heads = static_cast<std::int64_t>(x.size()) / (tokens * d);
  const Side& s = side(layer, role);
  final_tokens.resize(static_cast<std::size_t>(heads * tokens));
  if (s.scheme == nullptr) {  // the exact side of a K/V pair: every token final, as computed, on append
    raw = x;
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t j = 0; j < tokens; ++j)
        final_tokens[static_cast<std::size_t>(h * tokens + j)] = static_cast<std::uint32_t>(j + 1);
    for (std::int64_t time = 0; time < tokens; ++time)
      held_bytes_sum_ += static_cast<std::uint64_t>(heads * (time + 1) * d) * sizeof(float);
    held_elements_sum_ += static_cast<std::uint64_t>(heads * d * tokens * (tokens + 1) / 2);
    count_bytes(role, x.size() * sizeof(float));
    elements_ += x.size();
    return;
  }
  // The scheme's input: x as computed, or rounded to fp16 once for a family that stores fp16;
  // the timeline holds it in the raw dtype when the role keeps rows raw (rule C9).
  std::vector<std::uint16_t> half;
  if (s.stores_fp16) {
    half.resize(x.size());
    from_float(x.data(), MutTensor{half.data(), DType::f16, heads * tokens, d});
  }
  raw.resize(x.size());
  for (std::int64_t h = 0; h < heads; ++h) {
    const ConstTensor input = s.stores_fp16 ? ConstTensor{half.data() + h * tokens * d, DType::f16, tokens, d}
                                            : ConstTensor{x.data() + h * tokens * d, DType::f32, tokens, d};
    const CausalTimeline t = causal_timeline(*s.scheme, input, role, raw_dtype_);
    std::memcpy(raw.data() + h * tokens * d, t.held_rows.data(), t.held_rows.size() * sizeof(float));
    std::memcpy(x.data() + h * tokens * d, t.final_values.data(), t.final_values.size() * sizeof(float));
    std::copy(t.schedule.final_tokens.begin(), t.schedule.final_tokens.end(), final_tokens.begin() + h * tokens);
    for (std::int64_t time = 0; time < tokens; ++time) {
      held_bytes_sum_ += causal_held_bytes(t.schedule, time, d, t.row_dtype);
      held_elements_sum_ += static_cast<std::uint64_t>((time + 1) * d);
    }
    count_bytes(role, causal_held_bytes(t.schedule, tokens - 1, d, t.row_dtype));
    elements_ += static_cast<std::uint64_t>(tokens * d);
  }
}

void SchemeCache::append(std::int64_t layer, std::int64_t tokens, const std::vector<float>& k,
                         const std::vector<float>& v) {
  if (mode_ != CacheMode::causal) throw std::logic_error("the micro-batched decoder needs a causal cache");
  const ModelConfig& c = *config;
  const std::int64_t d = c.head_dim, heads = c.num_kv_heads;
  if (!decoder_) {
    decoder_ = std::make_unique<Decoder>();
    const auto slots = static_cast<std::size_t>(c.num_layers * heads * 2);
    decoder_->caches.resize(slots);
    decoder_->exact.resize(slots);
    for (std::int64_t l = 0; l < c.num_layers; ++l)
      for (std::int64_t g = 0; g < heads; ++g)
        for (TensorRole role : {TensorRole::key, TensorRole::value}) {
          const Side& s = side(l, role);
          if (s.scheme != nullptr)
            decoder_->caches[slot(l, heads, g, role)] =
                std::make_unique<CausalCache>(*s.scheme, role, d, s.input_dtype(), raw_dtype_);
        }
  }
  std::vector<std::uint16_t> half;
  for (std::int64_t h = 0; h < heads; ++h)
    for (TensorRole role : {TensorRole::key, TensorRole::value}) {
      const Side& s = side(layer, role);
      const float* rows = (role == TensorRole::key ? k : v).data() + h * tokens * d;
      if (s.scheme == nullptr) {
        std::vector<float>& exact = decoder_->exact[slot(layer, heads, h, role)];
        exact.insert(exact.end(), rows, rows + tokens * d);
        continue;
      }
      ConstTensor input{rows, DType::f32, tokens, d};
      if (s.stores_fp16) {
        half.resize(static_cast<std::size_t>(tokens * d));
        from_float(rows, MutTensor{half.data(), DType::f16, tokens, d});
        input = ConstTensor{half.data(), DType::f16, tokens, d};
      }
      decoder_->caches[slot(layer, heads, h, role)]->append(input);
    }
  if (layer == c.num_layers - 1) {  // a micro-batch is complete: count what every cache holds
    decoder_->tokens += tokens;
    const auto elements = static_cast<std::uint64_t>(decoder_->tokens * d * heads * 2 * c.num_layers);
    std::uint64_t role_held[2] = {0, 0};
    for (std::size_t i = 0; i < decoder_->caches.size(); ++i) {
      role_held[i % 2] +=
          decoder_->caches[i] ? decoder_->caches[i]->held_bytes() : decoder_->exact[i].size() * sizeof(float);
    }
    held_bytes_sum_ += role_held[0] + role_held[1];
    held_elements_sum_ += elements;
    bytes_ = role_held[0] + role_held[1];
    role_bytes_[0] = role_held[0];
    role_bytes_[1] = role_held[1];
    elements_ = elements;
  }
}

void SchemeCache::read(std::int64_t layer, std::vector<float>& k, std::vector<float>& v, const RopeKeys& rope_keys) {
  const ModelConfig& c = *config;
  const std::int64_t heads = c.num_kv_heads;
  std::vector<float> rows;
  k.clear();
  v.clear();
  for (std::int64_t h = 0; h < heads; ++h)
    for (TensorRole role : {TensorRole::key, TensorRole::value}) {
      std::vector<float>& out = role == TensorRole::key ? k : v;
      if (side(layer, role).scheme == nullptr) {
        const std::vector<float>& exact = decoder_->exact[slot(layer, heads, h, role)];
        out.insert(out.end(), exact.begin(), exact.end());
        continue;
      }
      decoder_->caches[slot(layer, heads, h, role)]->read(rows);
      out.insert(out.end(), rows.begin(), rows.end());
    }
  if (keys_ == KeyPosition::pre_rope)  // every position rotated after the cache, the raw tail's too
    rope_keys(k.data(), heads, static_cast<std::int64_t>(k.size()) / (heads * c.head_dim), 0);
}

}  // namespace dgq::sim

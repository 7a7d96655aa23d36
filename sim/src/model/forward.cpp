// The one-pass forward of a chunk (dgq/sim/model.hpp, forward_logits): every position at once,
// K/V through the cache hook. With a causal view (a causal cache at prefill cost) each query
// reads the keys as they were stored when its token was appended.
#include "dgq/errors.hpp"
#include "dgq/sim/model.hpp"
#include "model/forward_ops.hpp"

namespace dgq::sim {

std::vector<float> forward_logits(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic) {
  using forward::RowMat;
  const ModelConfig& c = model.config;
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw InputError("forward pass: no tokens");
  if (first_row < 0 || first_row >= n) throw InputError("forward pass: first logit row outside the tokens");
  RowMat x = forward::embed(model, tokens, 0);
  const forward::Ropes ropes = forward::rope_tables(c, n);
  const float query_scale = static_cast<float>(1.0 / std::sqrt(double(c.head_dim)));
  const forward::Attend attend = [&](std::int64_t layer, std::vector<float>& q, std::vector<float>& k,
                                     std::vector<float>& v) {
    cache.store(layer, n, k, v);
    cache.queries(layer, n, q);  // before the scale, as ggml quantizes the unscaled Q
    for (float& value : q) value *= query_scale;
    const forward::AttentionKeys keys{k.data(), v.data(), n, cache.causal_kv(layer)};
    return forward::attention(q, n, 0, keys, c, c.is_local_layer(layer) ? c.sliding_window : 0, arithmetic);
  };
  for (std::int64_t layer = 0; layer < c.num_layers; ++layer)
    forward::layer_step(model, layer, x, 0, ropes, arithmetic, attend);
  std::vector<float> logits(static_cast<std::size_t>((n - first_row) * c.vocab_size));
  forward::output_logits(model, x.bottomRows(n - first_row), arithmetic, logits.data());
  return logits;
}

}  // namespace dgq::sim

// The one-pass forward of a chunk (dgq/sim/model/model.hpp, forward_hidden and forward_logits): every position at once,
// K/V through the cache hook. With a causal view (a causal cache at prefill cost) each query
// reads the keys as they were stored when its token was appended.
#include <algorithm>

#include "dgq/errors.hpp"
#include "dgq/sim/model/forward.hpp"
#include "dgq/sim/model/forward_profile.hpp"
#include "forward/forward_ops.hpp"

namespace dgq::sim {

std::vector<float> forward_hidden(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic) {
  using forward::RowMat;
  const ModelConfig& c = model.config;
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw InputError("forward pass: no tokens");
  if (first_row < 0 || first_row >= n) throw InputError("forward pass: first logit row outside the tokens");
  const ForwardPassTimer pass;
  RowMat x = forward::embed(model, tokens, 0);
  const forward::Ropes ropes = forward::rope_tables(c, n);
  const float query_scale = static_cast<float>(1.0 / std::sqrt(double(c.head_dim)));
  const forward::Attend attend = [&](std::int64_t layer, std::vector<float>& q, std::vector<float>& k,
                                     std::vector<float>& v) {
    {
      const ForwardPartTimer timer(ForwardPart::cache, 0);
      cache.store(layer, n, k, v, forward::rope_keys_of(c, ropes, layer));
      cache.queries(layer, n, q);  // before the scale, as ggml quantizes the unscaled Q
    }
    for (float& value : q) value *= query_scale;
    const forward::AttentionKeys keys{k.data(), v.data(), n, cache.causal_kv(layer)};
    return forward::attention(q, n, 0, keys, c, c.is_local_layer(layer) ? c.sliding_window : 0, arithmetic);
  };
  for (std::int64_t layer = 0; layer < c.num_layers; ++layer)
    forward::layer_step(model, layer, x, 0, ropes, arithmetic, cache.key_position(), attend);
  const forward::RowMat last = x.bottomRows(n - first_row);
  return {last.data(), last.data() + last.size()};
}

void row_logits(const Model& model, const float* hidden, std::int64_t rows, Arithmetic arithmetic, float* out) {
  const ModelConfig& c = model.config;
  const ForwardPassTimer pass;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kLogitRowBlock) {
    const std::int64_t m = std::min(kLogitRowBlock, rows - r0);
    const forward::RowMat block = Eigen::Map<const forward::RowMat>(hidden + r0 * c.hidden, m, c.hidden);
    forward::output_logits(model, block, arithmetic, out + r0 * c.vocab_size);
  }
}

std::vector<float> forward_logits(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic) {
  const std::vector<float> hidden = forward_hidden(model, tokens, cache, first_row, arithmetic);
  const std::int64_t rows = static_cast<std::int64_t>(hidden.size()) / model.config.hidden;
  std::vector<float> logits(static_cast<std::size_t>(rows * model.config.vocab_size));
  row_logits(model, hidden.data(), rows, arithmetic, logits.data());
  return logits;
}

}  // namespace dgq::sim

// The literal decoder (dgq/sim/model/model.hpp, decode_logits): tokens in micro-batches, each written
// into the cache before its queries attend to everything the cache holds, as llama.cpp decodes.
// Only the micro-batch's rows go through the layers; earlier tokens live in the cache alone.
#include <algorithm>
#include <cmath>

#include "dgq/errors.hpp"
#include "dgq/sim/model/decoder.hpp"
#include "dgq/sim/model/forward_profile.hpp"
#include "forward/forward_ops.hpp"

namespace dgq::sim {

std::vector<float> decode_logits(const Model& model, std::span<const std::int32_t> tokens, DecoderCache& cache,
                                 std::int64_t first_row, std::int64_t ubatch, Arithmetic arithmetic) {
  using forward::RowMat;
  const ModelConfig& c = model.config;
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw InputError("forward pass: no tokens");
  if (first_row < 0 || first_row >= n) throw InputError("forward pass: first logit row outside the tokens");
  if (ubatch < 1) throw ParameterError("--ubatch " + std::to_string(ubatch) + ": must be at least 1");
  const ForwardPassTimer pass;
  const forward::Ropes ropes = forward::rope_tables(c, n);
  const float query_scale = static_cast<float>(1.0 / std::sqrt(double(c.head_dim)));
  std::vector<float> logits(static_cast<std::size_t>((n - first_row) * c.vocab_size));
  std::vector<float> all_k, all_v;
  for (std::int64_t u0 = 0; u0 < n; u0 += ubatch) {
    const std::int64_t m = std::min(ubatch, n - u0);
    RowMat x = forward::embed(model, tokens.subspan(static_cast<std::size_t>(u0), static_cast<std::size_t>(m)), u0);
    const forward::Attend attend = [&](std::int64_t layer, std::vector<float>& q, std::vector<float>& k,
                                       std::vector<float>& v) {
      {
        const ForwardPartTimer timer(ForwardPart::cache, 0);
        cache.append(layer, m, k, v);
        cache.read(layer, all_k, all_v, forward::rope_keys_of(c, ropes, layer));
        cache.queries(layer, m, q);
      }
      for (float& value : q) value *= query_scale;
      const forward::AttentionKeys keys{all_k.data(), all_v.data(), u0 + m, nullptr};
      return forward::attention(q, m, u0, keys, c, c.is_local_layer(layer) ? c.sliding_window : 0, arithmetic);
    };
    for (std::int64_t layer = 0; layer < c.num_layers; ++layer)
      forward::layer_step(model, layer, x, u0, ropes, arithmetic, cache.key_position(), attend);
    const std::int64_t from = std::max(first_row, u0);  // the micro-batch's rows that give logits
    if (from < u0 + m)
      forward::output_logits(model, x.bottomRows(u0 + m - from), arithmetic,
                             logits.data() + (from - first_row) * c.vocab_size);
  }
  return logits;
}

}  // namespace dgq::sim

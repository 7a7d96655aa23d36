#pragma once
// The operations of the fp32 forward pass (llama and Gemma 3), shared by the one-pass prefill
// (forward.cpp) and the micro-batched decoder (decode.cpp). Each comes in the two arithmetics
// of dgq/sim/model/model.hpp where the order of a sum could depend on the batch: matrix products and
// attention. Everything else is per row or per element and batch-independent already.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "dgq/sim/model/forward.hpp"

namespace dgq::sim::forward {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The row-exact dot product: 8 lanes (element i into lane i mod 8, i increasing), then a fixed
// tree; the same for every row whatever the batch.
float dot_fixed(const float* a, const float* b, std::int64_t n);

// y = x W^T for a weight stored [out][in].
RowMat project(const RowMat& x, const Weight& w, Arithmetic a);

// Each row of width `width` divided by its RMS, then multiplied by weight.
void rms_norm_rows(float* data, std::int64_t rows, std::int64_t width, const Weight& weight, double eps);

struct RopeTable {
  std::int64_t half = 0;
  std::vector<float> cos, sin;  // [positions][half]
};
RopeTable rope_table(std::int64_t positions, std::int64_t head_dim, double theta);
// Rotate-half RoPE on head-major [heads][tokens][head_dim]; row p has position first_position + p.
void apply_rope(float* x, std::int64_t heads, std::int64_t tokens, const RopeTable& t, std::int64_t first_position);

// The keys attention reads: [kv_heads][keys][head_dim] each, the first `keys` positions; with a
// causal view (one-pass causal cache) some of them are read from its raw copies instead.
struct AttentionKeys {
  const float* k = nullptr;
  const float* v = nullptr;
  std::int64_t keys = 0;
  const CausalKv* causal = nullptr;
};

// Queries [q_heads][tokens][head_dim] (already scaled) at positions first_position.. attend, GQA
// and causally masked (local layers: the last `window` positions), to keys; returns
// [tokens][q_heads * head_dim]. blocked: query blocks against key tiles with an online softmax
// (attention.cpp); row_exact: each row alone, in key order.
RowMat attention(const std::vector<float>& q, std::int64_t tokens, std::int64_t first_position,
                 const AttentionKeys& keys, const ModelConfig& c, std::int64_t window, Arithmetic a);

// The per-layer step on rows x (positions first_position..): norms, projections, RoPE, then
// `attend` (which writes K/V into a cache and returns the attention output [rows][q_rows]
// from the unscaled RoPE'd queries), the output projection, residuals and the MLP. With keys
// pre_rope the keys reach `attend` unrotated (the cache rotates them: KvCacheHook).
using Attend =
    std::function<RowMat(std::int64_t layer, std::vector<float>& q, std::vector<float>& k, std::vector<float>& v)>;
struct Ropes {
  RopeTable global, local;
  const RopeTable& of_layer(const ModelConfig& c, std::int64_t layer) const {
    return c.is_local_layer(layer) ? local : global;
  }
};
Ropes rope_tables(const ModelConfig& c, std::int64_t positions);
// The RopeKeys of one layer (model.hpp): apply_rope with the layer's table.
RopeKeys rope_keys_of(const ModelConfig& c, const Ropes& ropes, std::int64_t layer);
void layer_step(const Model& model, std::int64_t layer, RowMat& x, std::int64_t first_position, const Ropes& ropes,
                Arithmetic a, KeyPosition keys, const Attend& attend);

// The embedded (and scaled) rows of tokens.
RowMat embed(const Model& model, std::span<const std::int32_t> tokens, std::int64_t first_position);
// Logits [rows][vocab] of the final hidden rows (output norm, tied output matrix).
void output_logits(const Model& model, const RowMat& rows, Arithmetic a, float* out);

}  // namespace dgq::sim::forward

// The fp32 forward pass of one causal prefill (llama and Gemma 3), the C++ twin of the numpy
// pass in tools/export_trace.py: same operation order where it matters (RMSNorm divides by
// sqrt(mean(x^2) + eps) then scales; RoPE angles in double rounded to float; queries scaled
// before Q K^T; softmax terms below e^-80 dropped), so logits agree to ~1e-6 relative.
// Matrix products go through Eigen (multi-threaded by OpenMP); attention runs one (query head,
// block of 64 queries) per OpenMP task.
#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "dgq/errors.hpp"
#include "dgq/sim/model.hpp"

namespace dgq::sim {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat>;
using MutMap = Eigen::Map<RowMat>;

constexpr float kNegligibleLogit = -80.0f;  // as export_trace.py's SOFTMAX_NEGLIGIBLE_LOGIT

ConstMap as_matrix(const Weight& w) { return ConstMap(w.values.data(), w.rows, w.cols); }

// y = x W^T for a weight stored [out][in].
RowMat project(const RowMat& x, const Weight& w) {
  RowMat y(x.rows(), w.rows);
  y.noalias() = x * as_matrix(w).transpose();
  return y;
}

// Each row of width `width` (a whole hidden state, or one head of it) divided by its RMS, then
// multiplied by weight (length width).
void rms_norm_rows(float* data, std::int64_t rows, std::int64_t width, const Weight& weight, double eps) {
  const float eps_f = static_cast<float>(eps);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* x = data + r * width;
    double sum = 0;
    for (std::int64_t c = 0; c < width; ++c) sum += double(x[c]) * double(x[c]);
    const float denom = std::sqrt(static_cast<float>(sum / double(width)) + eps_f);
    for (std::int64_t c = 0; c < width; ++c) x[c] = (x[c] / denom) * weight.values[c];
  }
}

RowMat rms_norm(const RowMat& x, const Weight& weight, double eps) {
  RowMat y = x;
  rms_norm_rows(y.data(), y.rows(), y.cols(), weight, eps);
  return y;
}

struct RopeTable {
  std::int64_t half = 0;
  std::vector<float> cos, sin;  // [positions][half]
};

RopeTable rope_table(std::int64_t positions, std::int64_t head_dim, double theta) {
  RopeTable t{head_dim / 2, {}, {}};
  t.cos.resize(static_cast<std::size_t>(positions * t.half));
  t.sin.resize(t.cos.size());
  for (std::int64_t i = 0; i < t.half; ++i) {
    const double inv_freq = 1.0 / std::pow(theta, double(2 * i) / double(head_dim));
    for (std::int64_t p = 0; p < positions; ++p) {
      const double angle = double(p) * inv_freq;
      t.cos[p * t.half + i] = static_cast<float>(std::cos(angle));
      t.sin[p * t.half + i] = static_cast<float>(std::sin(angle));
    }
  }
  return t;
}

// Rotate-half RoPE on a head-major [heads][tokens][head_dim] buffer: channel j pairs with j + d/2.
void apply_rope(std::vector<float>& x, std::int64_t heads, std::int64_t tokens, const RopeTable& t) {
  const std::int64_t d = 2 * t.half;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t p = 0; p < tokens; ++p) {
      float* row = x.data() + (h * tokens + p) * d;
      const float* c = t.cos.data() + p * t.half;
      const float* s = t.sin.data() + p * t.half;
      for (std::int64_t j = 0; j < t.half; ++j) {
        const float a = row[j], b = row[j + t.half];
        row[j] = a * c[j] - b * s[j];
        row[j + t.half] = b * c[j] + a * s[j];
      }
    }
}

// [tokens][heads*d] -> [heads][tokens][d]
std::vector<float> to_head_major(const RowMat& x, std::int64_t heads, std::int64_t d) {
  const std::int64_t n = x.rows();
  std::vector<float> out(static_cast<std::size_t>(heads * n * d));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t t = 0; t < n; ++t)
      for (std::int64_t c = 0; c < d; ++c) out[(h * n + t) * d + c] = x(t, h * d + c);
  return out;
}

// Causal (and, for local layers, sliding-window) GQA attention on head-major q/k/v; returns
// [tokens][q_heads * d]. Queries go in blocks of kQueryBlock, each against only the keys some
// query of the block can see, so the masked part of the score matrix is mostly never computed.
constexpr std::int64_t kQueryBlock = 64;

RowMat attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                 const ModelConfig& c, std::int64_t n, std::int64_t window) {
  const std::int64_t d = c.head_dim, group = c.num_q_heads / c.num_kv_heads;
  const std::int64_t blocks = (n + kQueryBlock - 1) / kQueryBlock;
  RowMat out(n, c.q_rows());
#pragma omp parallel
  {
    RowMat scores, block_out;
#pragma omp for schedule(dynamic)
    for (std::int64_t task = 0; task < c.num_q_heads * blocks; ++task) {
      const std::int64_t h = task / blocks, b0 = (task % blocks) * kQueryBlock;
      const std::int64_t b1 = std::min(n, b0 + kQueryBlock), rows = b1 - b0;
      const std::int64_t k0 = window > 0 ? std::max<std::int64_t>(0, b0 - window + 1) : 0, keys = b1 - k0;
      const std::int64_t g = h / group;
      ConstMap qb(q.data() + (h * n + b0) * d, rows, d);
      ConstMap kb(k.data() + (g * n + k0) * d, keys, d);
      ConstMap vb(v.data() + (g * n + k0) * d, keys, d);
      scores.resize(rows, keys);
      scores.noalias() = qb * kb.transpose();
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = b0 + r;
        const std::int64_t lo = (window > 0 ? std::max<std::int64_t>(0, i - window + 1) : 0) - k0, hi = i - k0;
        float* row = scores.data() + r * keys;
        float peak = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = lo; j <= hi; ++j) peak = std::max(peak, row[j]);
        double sum = 0;
        for (std::int64_t j = 0; j < keys; ++j) {
          if (j < lo || j > hi) { row[j] = 0.0f; continue; }
          const float shifted = row[j] - peak;
          row[j] = shifted < kNegligibleLogit ? 0.0f : std::exp(shifted);
          sum += row[j];
        }
        const float total = static_cast<float>(sum);
        for (std::int64_t j = lo; j <= hi; ++j) row[j] /= total;
      }
      block_out.resize(rows, d);
      block_out.noalias() = scores * vb;
      out.block(b0, h * d, rows, d) = block_out;
    }
  }
  return out;
}

void activate(RowMat& gate, const std::string& activation) {
  float* x = gate.data();
  const std::int64_t count = gate.size();
  if (activation == "silu") {
    for (std::int64_t i = 0; i < count; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
  } else {  // gelu-tanh (validated by load_model)
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = x[i];
      x[i] = 0.5f * v * (1.0f + std::tanh(k0 * (v + k1 * v * v * v)));
    }
  }
}

}  // namespace

std::vector<float> forward_logits(const Model& model, std::span<const std::int32_t> tokens,
                                  KvCacheHook& cache, std::int64_t first_row) {
  const ModelConfig& c = model.config;
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw InputError("forward pass: no tokens");
  if (first_row < 0 || first_row >= n) throw InputError("forward pass: first logit row outside the tokens");
  const std::int64_t d = c.head_dim;
  RowMat x(n, c.hidden);
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int32_t id = tokens[static_cast<std::size_t>(t)];
    if (id < 0 || id >= c.vocab_size)
      throw InputError("forward pass: token " + std::to_string(t) + " has id " + std::to_string(id) +
                       ", outside the vocabulary of " + std::to_string(c.vocab_size));
    x.row(t) = as_matrix(model.token_embd).row(id);
  }
  if (c.embedding_scale != 1.0) x *= static_cast<float>(c.embedding_scale);
  const RopeTable rope_global = rope_table(n, d, c.rope_theta);
  const RopeTable rope_local = c.sliding_window_pattern > 0 ? rope_table(n, d, c.rope_theta_local) : RopeTable{};
  const float query_scale = static_cast<float>(1.0 / std::sqrt(double(d)));

  for (std::int64_t layer = 0; layer < c.num_layers; ++layer) {
    const LayerWeights& w = model.layers[static_cast<std::size_t>(layer)];
    const bool local = c.is_local_layer(layer);
    RowMat h = rms_norm(x, w.attn_norm, c.rms_eps);
    std::vector<float> q = to_head_major(project(h, w.attn_q), c.num_q_heads, d);
    std::vector<float> k = to_head_major(project(h, w.attn_k), c.num_kv_heads, d);
    std::vector<float> v = to_head_major(project(h, w.attn_v), c.num_kv_heads, d);
    if (c.qk_norm) {
      rms_norm_rows(q.data(), c.num_q_heads * n, d, w.attn_q_norm, c.rms_eps);
      rms_norm_rows(k.data(), c.num_kv_heads * n, d, w.attn_k_norm, c.rms_eps);
    }
    const RopeTable& rope = local ? rope_local : rope_global;
    apply_rope(q, c.num_q_heads, n, rope);
    apply_rope(k, c.num_kv_heads, n, rope);
    cache.store(layer, n, k, v);
    cache.queries(layer, n, q);  // before the scale, as ggml quantizes the unscaled Q
    for (float& value : q) value *= query_scale;
    RowMat attn = project(attention(q, k, v, c, n, local ? c.sliding_window : 0), w.attn_output);
    if (c.post_norms) rms_norm_rows(attn.data(), n, c.hidden, w.post_attention_norm, c.rms_eps);
    x += attn;
    h = rms_norm(x, w.ffn_norm, c.rms_eps);
    RowMat gate = project(h, w.ffn_gate);
    activate(gate, c.activation);
    gate.array() *= project(h, w.ffn_up).array();
    RowMat down = project(gate, w.ffn_down);
    if (c.post_norms) rms_norm_rows(down.data(), n, c.hidden, w.post_ffw_norm, c.rms_eps);
    x += down;
  }
  RowMat last = rms_norm(x.bottomRows(n - first_row), model.output_norm, c.rms_eps);
  std::vector<float> logits(static_cast<std::size_t>((n - first_row) * c.vocab_size));
  MutMap(logits.data(), n - first_row, c.vocab_size).noalias() = last * as_matrix(model.token_embd).transpose();
  return logits;
}

}  // namespace dgq::sim

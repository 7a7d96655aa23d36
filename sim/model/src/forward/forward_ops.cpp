// The forward pass's operations (forward_ops.hpp), the C++ twin of the numpy pass in
// tools/export-trace.py: same operation order where it matters (RMSNorm divides by
// sqrt(mean(x^2) + eps) then scales; RoPE angles in double rounded to float; queries scaled
// before Q K^T), so logits agree to ~1e-6 relative. Attention is in attention.cpp.
#include "forward/forward_ops.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/model/forward_profile.hpp"
#include "dgq/sim/model/gemm_library.hpp"

namespace dgq::sim::forward {
namespace {

// The element-wise steps (norms, RoPE, activations, layout copies) run on the pass's threads
// above this many elements: one chunk's rows, not a decoder's single token.
constexpr std::int64_t kParallelElements = 1 << 16;

using ConstMap = Eigen::Map<const RowMat>;
using MutMap = Eigen::Map<RowMat>;

ConstMap as_matrix(const Weight& w) { return ConstMap(w.values.data(), w.rows, w.cols); }

}  // namespace

// The row-exact dot product: 8 lanes (lane i mod 8, in increasing i), then a fixed tree. The
// same for every row whatever the batch, and vectorisable without reordering.
float dot_fixed(const float* a, const float* b, std::int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  for (int j = 0; i < n; ++i, ++j) acc[j] += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

namespace {

RowMat project_untimed(const RowMat& x, const Weight& w, Arithmetic a) {
  RowMat y(x.rows(), w.rows);
  assert(x.cols() == w.cols);
  if (a == Arithmetic::blocked) {
    multiply_by_weights(x.data(), x.rows(), w.cols, w.values.data(), w.rows, y.data());
    return y;
  }
  const std::int64_t rows = x.rows(), outs = w.rows, in = w.cols;
#pragma omp parallel for schedule(static)
  for (std::int64_t task = 0; task < rows * outs; ++task) {
    const std::int64_t r = task / outs, o = task % outs;
    y(r, o) = dot_fixed(x.data() + r * in, w.values.data() + o * in, in);
  }
  return y;
}

double product_flops(std::int64_t rows, const Weight& w) {
  return 2.0 * static_cast<double>(rows) * static_cast<double>(w.rows) * static_cast<double>(w.cols);
}

}  // namespace

RowMat project(const RowMat& x, const Weight& w, Arithmetic a) {
  const ForwardPartTimer timer(ForwardPart::weight_gemms, product_flops(x.rows(), w));
  return project_untimed(x, w, a);
}

void rms_norm_rows(float* data, std::int64_t rows, std::int64_t width, const Weight& weight, double eps) {
  const float eps_f = static_cast<float>(eps);
  // Rows are independent (each its own sum, in its own order): threads change no bit. Small
  // batches (a decoder's one token) stay on one thread, where a parallel region costs more.
#pragma omp parallel for schedule(static) if (rows * width >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* x = data + r * width;
    double sum = 0;
    for (std::int64_t c = 0; c < width; ++c) sum += double(x[c]) * double(x[c]);
    const float denom = std::sqrt(static_cast<float>(sum / double(width)) + eps_f);
    for (std::int64_t c = 0; c < width; ++c) x[c] = (x[c] / denom) * weight.values[c];
  }
}

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

void apply_rope(float* x, std::int64_t heads, std::int64_t tokens, const RopeTable& t, std::int64_t first_position) {
  const std::int64_t d = 2 * t.half;
#pragma omp parallel for collapse(2) schedule(static) if (heads * tokens * d >= kParallelElements)
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t p = 0; p < tokens; ++p) {
      float* row = x + (h * tokens + p) * d;
      const float* c = t.cos.data() + (first_position + p) * t.half;
      const float* s = t.sin.data() + (first_position + p) * t.half;
      for (std::int64_t j = 0; j < t.half; ++j) {
        const float a = row[j], b = row[j + t.half];
        row[j] = a * c[j] - b * s[j];
        row[j + t.half] = b * c[j] + a * s[j];
      }
    }
}

namespace {

// [tokens][heads*d] -> [heads][tokens][d]
std::vector<float> to_head_major(const RowMat& x, std::int64_t heads, std::int64_t d) {
  const std::int64_t n = x.rows();
  std::vector<float> out(static_cast<std::size_t>(heads * n * d));
#pragma omp parallel for collapse(2) schedule(static) if (heads * n * d >= kParallelElements)
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t t = 0; t < n; ++t)
      for (std::int64_t c = 0; c < d; ++c) out[(h * n + t) * d + c] = x(t, h * d + c);
  return out;
}

// x W^T, plus the bias row when the layer has one (Qwen2's Q/K/V; an empty bias adds nothing).
// A separate add, as ggml's ggml_add after its mul_mat.
RowMat project_biased(const RowMat& h, const Weight& w, const Weight& bias, Arithmetic a) {
  RowMat y = project(h, w, a);
  if (!bias.values.empty()) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.values.data(), bias.cols);
  return y;
}

RowMat rms_norm(const RowMat& x, const Weight& weight, double eps) {
  RowMat y = x;
  rms_norm_rows(y.data(), y.rows(), y.cols(), weight, eps);
  return y;
}

void activate(RowMat& gate, const std::string& activation) {
  float* x = gate.data();
  const std::int64_t count = gate.size();
  if (activation == "silu") {
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
    for (std::int64_t i = 0; i < count; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
  } else {  // gelu-tanh (validated by load_model)
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = x[i];
      x[i] = 0.5f * v * (1.0f + std::tanh(k0 * (v + k1 * v * v * v)));
    }
  }
}

}  // namespace

Ropes rope_tables(const ModelConfig& c, std::int64_t positions) {
  Ropes r;
  r.global = rope_table(positions, c.head_dim, c.rope_theta);
  if (c.sliding_window_pattern > 0) r.local = rope_table(positions, c.head_dim, c.rope_theta_local);
  return r;
}

RopeKeys rope_keys_of(const ModelConfig& c, const Ropes& ropes, std::int64_t layer) {
  const RopeTable* table = &ropes.of_layer(c, layer);
  return [table](float* keys, std::int64_t heads, std::int64_t tokens, std::int64_t first_position) {
    apply_rope(keys, heads, tokens, *table, first_position);
  };
}

void layer_step(const Model& model, std::int64_t layer, RowMat& x, std::int64_t first_position, const Ropes& ropes,
                Arithmetic a, KeyPosition keys, const Attend& attend) {
  const ModelConfig& c = model.config;
  const LayerWeights& w = model.layers[static_cast<std::size_t>(layer)];
  const std::int64_t n = x.rows(), d = c.head_dim;
  RowMat h = rms_norm(x, w.attn_norm, c.rms_eps);
  std::vector<float> q = to_head_major(project_biased(h, w.attn_q, w.attn_q_bias, a), c.num_q_heads, d);
  std::vector<float> k = to_head_major(project_biased(h, w.attn_k, w.attn_k_bias, a), c.num_kv_heads, d);
  std::vector<float> v = to_head_major(project_biased(h, w.attn_v, w.attn_v_bias, a), c.num_kv_heads, d);
  if (c.qk_norm) {
    rms_norm_rows(q.data(), c.num_q_heads * n, d, w.attn_q_norm, c.rms_eps);
    rms_norm_rows(k.data(), c.num_kv_heads * n, d, w.attn_k_norm, c.rms_eps);
  }
  const RopeTable& rope = ropes.of_layer(c, layer);
  apply_rope(q.data(), c.num_q_heads, n, rope, first_position);
  if (keys == KeyPosition::post_rope) apply_rope(k.data(), c.num_kv_heads, n, rope, first_position);
  RowMat attn = project(attend(layer, q, k, v), w.attn_output, a);
  if (c.post_norms) rms_norm_rows(attn.data(), n, c.hidden, w.post_attention_norm, c.rms_eps);
  x += attn;
  h = rms_norm(x, w.ffn_norm, c.rms_eps);
  RowMat gate = project(h, w.ffn_gate, a);
  activate(gate, c.activation);
  gate.array() *= project(h, w.ffn_up, a).array();
  RowMat down = project(gate, w.ffn_down, a);
  if (c.post_norms) rms_norm_rows(down.data(), n, c.hidden, w.post_ffw_norm, c.rms_eps);
  x += down;
}

RowMat embed(const Model& model, std::span<const std::int32_t> tokens, std::int64_t first_position) {
  const ModelConfig& c = model.config;
  const auto n = static_cast<std::int64_t>(tokens.size());
  RowMat x(n, c.hidden);
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int32_t id = tokens[static_cast<std::size_t>(t)];
    if (id < 0 || id >= c.vocab_size)
      throw InputError("forward pass: token " + std::to_string(first_position + t) + " has id " + std::to_string(id) +
                       ", outside the vocabulary of " + std::to_string(c.vocab_size));
    x.row(t) = as_matrix(model.token_embd).row(id);
  }
  if (c.embedding_scale != 1.0) x *= static_cast<float>(c.embedding_scale);
  return x;
}

void output_logits(const Model& model, const RowMat& rows, Arithmetic a, float* out) {
  const ModelConfig& c = model.config;
  const Weight& output = c.tied_output ? model.token_embd : model.output;
  const ForwardPartTimer timer(ForwardPart::logits, product_flops(rows.rows(), output));
  const RowMat last = rms_norm(rows, model.output_norm, c.rms_eps);
  if (a == Arithmetic::blocked) {
    multiply_by_weights(last.data(), last.rows(), output.cols, output.values.data(), output.rows, out);
    return;
  }
  const RowMat logits = project_untimed(last, output, a);
  std::copy(logits.data(), logits.data() + logits.size(), out);
}

}  // namespace dgq::sim::forward

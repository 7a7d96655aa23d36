// The forward pass's operations (forward_ops.hpp), the C++ twin of the numpy pass in
// tools/export_trace.py: same operation order where it matters (RMSNorm divides by
// sqrt(mean(x^2) + eps) then scales; RoPE angles in double rounded to float; queries scaled
// before Q K^T; softmax terms below e^-80 dropped), so logits agree to ~1e-6 relative.
#include "model/forward_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "dgq/errors.hpp"

namespace dgq::sim::forward {
namespace {

using ConstMap = Eigen::Map<const RowMat>;
using MutMap = Eigen::Map<RowMat>;

constexpr float kNegligibleLogit = -80.0f;  // as export_trace.py's SOFTMAX_NEGLIGIBLE_LOGIT

ConstMap as_matrix(const Weight& w) { return ConstMap(w.values.data(), w.rows, w.cols); }

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

// Softmax of one score row over [lo, hi] in place (entries outside become 0), as the numpy pass.
void softmax_row(float* row, std::int64_t count, std::int64_t lo, std::int64_t hi) {
  float peak = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = lo; j <= hi; ++j) peak = std::max(peak, row[j]);
  double sum = 0;
  for (std::int64_t j = 0; j < count; ++j) {
    if (j < lo || j > hi) { row[j] = 0.0f; continue; }
    const float shifted = row[j] - peak;
    row[j] = shifted < kNegligibleLogit ? 0.0f : std::exp(shifted);
    sum += row[j];
  }
  const float total = static_cast<float>(sum);
  for (std::int64_t j = lo; j <= hi; ++j) row[j] /= total;
}

// A key's row as the query at `position` reads it: the stored row, or under a causal view the
// raw row when the key was not final yet when that query's token was appended.
struct KeyReader {
  const AttentionKeys& keys;
  std::int64_t d, head;
  // The number of stored (final) keys the query at `position` reads; keys above are raw. With
  // no causal view, or when every visible key is final, position + 1 ("all stored").
  std::int64_t final_k(std::int64_t position) const { return split(keys.causal ? &keys.causal->final_k : nullptr, position); }
  std::int64_t final_v(std::int64_t position) const { return split(keys.causal ? &keys.causal->final_v : nullptr, position); }
  const float* k(std::int64_t j, std::int64_t split_k) const {
    return (j < split_k ? keys.k : keys.causal->raw_k.data()) + (head * keys.keys + j) * d;
  }
  const float* v(std::int64_t j, std::int64_t split_v) const {
    return (j < split_v ? keys.v : keys.causal->raw_v.data()) + (head * keys.keys + j) * d;
  }

 private:
  std::int64_t split(const std::vector<std::uint32_t>* f, std::int64_t position) const {
    if (f == nullptr) return position + 1;
    return std::min<std::int64_t>((*f)[static_cast<std::size_t>(head * keys.keys + position)], position + 1);
  }
};

std::int64_t first_visible(std::int64_t position, std::int64_t window) {
  return window > 0 ? std::max<std::int64_t>(0, position - window + 1) : 0;
}

// One query, row-exact: scores by dot_fixed in key order, the softmax, then the weighted sum
// of the values accumulated in key order.
void attend_row_exact(const float* q, std::int64_t position, std::int64_t window, const KeyReader& r,
                      std::vector<float>& scores, float* out) {
  const std::int64_t d = r.d, lo = first_visible(position, window);
  const std::int64_t sk = r.final_k(position), sv = r.final_v(position), n = position - lo + 1;
  scores.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = lo; j <= position; ++j) scores[static_cast<std::size_t>(j - lo)] = dot_fixed(q, r.k(j, sk), d);
  softmax_row(scores.data(), n, 0, n - 1);
  std::fill(out, out + d, 0.0f);
  for (std::int64_t j = lo; j <= position; ++j) {
    const float p = scores[static_cast<std::size_t>(j - lo)];
    const float* v = r.v(j, sv);
    for (std::int64_t c = 0; c < d; ++c) out[c] += p * v[c];
  }
}

// Query rows [r0, r1) of one head, blocked: one score matrix against the keys the rows can see.
// The caller makes sure every row reads the same keys (the same causal splits).
void attend_block(const float* q, std::int64_t r0, std::int64_t r1, std::int64_t first_position, std::int64_t window,
                  const KeyReader& r, RowMat& scores, RowMat& block_out, RowMat& mixed_k, RowMat& mixed_v,
                  RowMat& out, std::int64_t out_col) {
  const std::int64_t d = r.d, rows = r1 - r0;
  const std::int64_t p_first = first_position + r0, p_last = first_position + r1 - 1;
  const std::int64_t k0 = first_visible(p_first, window), keys = p_last + 1 - k0;
  const std::int64_t sk = r.final_k(p_first), sv = r.final_v(p_first);
  const auto gather = [&](bool is_k, std::int64_t split, RowMat& mixed) -> ConstMap {
    // Every key the run sees is stored: read in place (a prefill cache's only case).
    if (split > p_first) return ConstMap((is_k ? r.k(k0, split) : r.v(k0, split)), keys, d);
    mixed.resize(keys, d);
    for (std::int64_t j = 0; j < keys; ++j) {
      const float* src = is_k ? r.k(k0 + j, split) : r.v(k0 + j, split);
      std::copy(src, src + d, mixed.data() + j * d);
    }
    return ConstMap(mixed.data(), keys, d);
  };
  const ConstMap kb = gather(true, sk, mixed_k), vb = gather(false, sv, mixed_v);
  ConstMap qb(q + r0 * d, rows, d);
  scores.resize(rows, keys);
  scores.noalias() = qb * kb.transpose();
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t p = first_position + r0 + i;
    softmax_row(scores.data() + i * keys, keys, first_visible(p, window) - k0, p - k0);
  }
  block_out.resize(rows, d);
  block_out.noalias() = scores * vb;
  out.block(r0, out_col, rows, d) = block_out;
}

}  // namespace

RowMat project(const RowMat& x, const Weight& w, Arithmetic a) {
  RowMat y(x.rows(), w.rows);
  if (a == Arithmetic::blocked) {
    y.noalias() = x * as_matrix(w).transpose();
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

void apply_rope(std::vector<float>& x, std::int64_t heads, std::int64_t tokens, const RopeTable& t,
                std::int64_t first_position) {
  const std::int64_t d = 2 * t.half;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t p = 0; p < tokens; ++p) {
      float* row = x.data() + (h * tokens + p) * d;
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
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t t = 0; t < n; ++t)
      for (std::int64_t c = 0; c < d; ++c) out[(h * n + t) * d + c] = x(t, h * d + c);
  return out;
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
    for (std::int64_t i = 0; i < count; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
  } else {  // gelu-tanh (validated by load_model)
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = x[i];
      x[i] = 0.5f * v * (1.0f + std::tanh(k0 * (v + k1 * v * v * v)));
    }
  }
}

// Blocks of at most kQueryBlock query rows, cut further where the causal splits change, so the
// masked part of a score matrix is mostly never computed and every block reads one key set.
constexpr std::int64_t kQueryBlock = 64;

}  // namespace

RowMat attention(const std::vector<float>& q, std::int64_t tokens, std::int64_t first_position,
                 const AttentionKeys& keys, const ModelConfig& c, std::int64_t window, Arithmetic a) {
  const std::int64_t d = c.head_dim, group = c.num_q_heads / c.num_kv_heads;
  const std::int64_t blocks = (tokens + kQueryBlock - 1) / kQueryBlock;
  RowMat out(tokens, c.q_rows());
#pragma omp parallel
  {
    RowMat scores, block_out, mixed_k, mixed_v;
    std::vector<float> row_scores;
#pragma omp for schedule(dynamic)
    for (std::int64_t task = 0; task < c.num_q_heads * blocks; ++task) {
      const std::int64_t h = task / blocks, b0 = (task % blocks) * kQueryBlock;
      const std::int64_t b1 = std::min(tokens, b0 + kQueryBlock);
      const KeyReader reader{keys, d, h / group};
      const float* qh = q.data() + h * tokens * d;
      if (a == Arithmetic::row_exact) {
        for (std::int64_t r = b0; r < b1; ++r)
          attend_row_exact(qh + r * d, first_position + r, window, reader, row_scores, out.data() + r * c.q_rows() + h * d);
        continue;
      }
      // Runs of rows with the same causal splits ("all stored" counts as one value).
      const auto signature = [&](std::int64_t r) {
        const std::int64_t p = first_position + r, sk = reader.final_k(p), sv = reader.final_v(p);
        return std::pair{sk > p ? -1 : sk, sv > p ? -1 : sv};
      };
      for (std::int64_t r0 = b0; r0 < b1;) {
        std::int64_t r1 = r0 + 1;
        while (r1 < b1 && signature(r1) == signature(r0)) ++r1;
        attend_block(qh, r0, r1, first_position, window, reader, scores, block_out, mixed_k, mixed_v, out, h * d);
        r0 = r1;
      }
    }
  }
  return out;
}

Ropes rope_tables(const ModelConfig& c, std::int64_t positions) {
  Ropes r;
  r.global = rope_table(positions, c.head_dim, c.rope_theta);
  if (c.sliding_window_pattern > 0) r.local = rope_table(positions, c.head_dim, c.rope_theta_local);
  return r;
}

void layer_step(const Model& model, std::int64_t layer, RowMat& x, std::int64_t first_position, const Ropes& ropes,
                Arithmetic a, const Attend& attend) {
  const ModelConfig& c = model.config;
  const LayerWeights& w = model.layers[static_cast<std::size_t>(layer)];
  const std::int64_t n = x.rows(), d = c.head_dim;
  RowMat h = rms_norm(x, w.attn_norm, c.rms_eps);
  std::vector<float> q = to_head_major(project(h, w.attn_q, a), c.num_q_heads, d);
  std::vector<float> k = to_head_major(project(h, w.attn_k, a), c.num_kv_heads, d);
  std::vector<float> v = to_head_major(project(h, w.attn_v, a), c.num_kv_heads, d);
  if (c.qk_norm) {
    rms_norm_rows(q.data(), c.num_q_heads * n, d, w.attn_q_norm, c.rms_eps);
    rms_norm_rows(k.data(), c.num_kv_heads * n, d, w.attn_k_norm, c.rms_eps);
  }
  const RopeTable& rope = c.is_local_layer(layer) ? ropes.local : ropes.global;
  apply_rope(q, c.num_q_heads, n, rope, first_position);
  apply_rope(k, c.num_kv_heads, n, rope, first_position);
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
  const RowMat last = rms_norm(rows, model.output_norm, c.rms_eps);
  if (a == Arithmetic::blocked) {
    MutMap(out, last.rows(), c.vocab_size).noalias() = last * as_matrix(model.token_embd).transpose();
    return;
  }
  const RowMat logits = project(last, model.token_embd, a);
  std::copy(logits.data(), logits.data() + logits.size(), out);
}

}  // namespace dgq::sim::forward

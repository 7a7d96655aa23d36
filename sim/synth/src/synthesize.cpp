// The synthetic trace generator (model described in dgq/sim/synth/synth.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include <Eigen/Dense>

#include "dgq/errors.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "head_model.hpp"
#include "prng.hpp"
#include "regimes.hpp"

namespace dgq::sim {

using synth::HeadModel;
using synth::Rng;

namespace {
// The shortest text that reads back as x ("1.5", "inf"), as the user typed it.
std::string shortest_text(double x) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, x).ptr);
}
}  // namespace

std::vector<std::string> synth_kinds() { return {"code", "prose", "legal", "poetry"}; }

void SynthOptions::validate() const {
  auto fail = [](const std::string& what) { throw ParameterError("gen-trace: " + what); };
  const auto kinds = synth_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    fail("--kind '" + kind + "' is not one of code, prose, legal, poetry");
  if (layers < 1 || layers > kMaxLayers)
    fail("--layers must be in [1, " + std::to_string(kMaxLayers) + "], got " + std::to_string(layers));
  if (kv_heads < 1 || kv_heads > kMaxKvHeads)
    fail("--kv-heads must be in [1, " + std::to_string(kMaxKvHeads) + "], got " + std::to_string(kv_heads));
  if (q_heads < 1 || q_heads % kv_heads != 0)
    fail("--q-heads must be a positive multiple of --kv-heads (" + std::to_string(kv_heads) + "), got " +
         std::to_string(q_heads));
  if (head_dim < 2 || head_dim % 2 != 0 || head_dim > kMaxHeadDim)
    fail("--head-dim must be even and in [2, " + std::to_string(kMaxHeadDim) + "] (RoPE pairs channels), got " +
         std::to_string(head_dim));
  if (tokens < 1 || tokens > kMaxTokens)
    fail("--tokens must be in [1, " + std::to_string(kMaxTokens) + "], got " + std::to_string(tokens));
  if (probes < 0 || probes > tokens) fail("--probes must be in [0, tokens], got " + std::to_string(probes));
  if (!(noise_rate >= 0.0 && noise_rate < 1.0))
    fail("--noise-rate must be in [0, 1), got " + shortest_text(noise_rate));
  if (dtype != DType::f16 && dtype != DType::f32) fail("--dtype must be f16 or f32");
  if (!(rope_theta > 1.0) || !std::isfinite(rope_theta))
    fail("--rope-theta must be a finite number > 1, got " + shortest_text(rope_theta));
  if (outlier_channels < 0 || outlier_channels > head_dim / 2)
    fail("--outlier-channels must be in [0, " + std::to_string(head_dim / 2) + "] (half of --head-dim), got " +
         std::to_string(outlier_channels));
  if (!(outlier_scale > 0.0) || !std::isfinite(outlier_scale)) fail("outlier scale must be > 0");
}

namespace {

// Probe i sits at floor((i+1) L / T) - 1: increasing, distinct, the last at L-1.
std::vector<std::int32_t> probe_positions(std::int64_t tokens, int probes) {
  std::vector<std::int32_t> pos(probes);
  for (int i = 0; i < probes; ++i) pos[i] = static_cast<std::int32_t>((i + 1) * tokens / probes - 1);
  return pos;
}

// Per-token key scale from the regimes (shared by every layer and head of the trace).
std::vector<double> token_scales(const SynthOptions& o) {
  const auto regimes = synth::make_regimes(o.kind, o.tokens, o.seed);
  std::vector<double> scale(o.tokens, 1.0);
  for (const auto& r : regimes)
    for (std::int64_t t = r.begin; t < r.end; ++t) scale[t] = synth::regime_scale_at(r, t);
  return scale;
}

constexpr double kSinkNorm = 4.0;  // sink key's extra norm, in units of sqrt(D) * gain

// Post-RoPE keys of one head, [L][D] row-major.
std::vector<double> head_keys(const SynthOptions& o, const HeadModel& m, const std::vector<double>& scale,
                              const std::vector<double>& inv_freq, int layer, int head) {
  Rng rng(o.seed, {static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(head), synth::kStreamKeys});
  const int d = o.head_dim;
  std::vector<double> k(static_cast<std::size_t>(o.tokens) * d);
  for (std::int64_t t = 0; t < o.tokens; ++t) {
    double* row = &k[static_cast<std::size_t>(t) * d];
    const double s = scale[t] * m.key_gain * (1.0 + 0.05 * rng.normal());  // per-token jitter
    for (int c = 0; c < d; ++c) {
      const double z = rng.normal();
      row[c] = m.outlier_value[c] != 0.0 ? s * m.outlier_value[c] * (1.0 + 0.08 * z)
                                         : s * (m.channel_mean[c] + m.channel_spread[c] * z);
    }
    if (t == 0)  // attention sink: a large component along the direction every query shares
      for (int c = 0; c < d; ++c)
        row[c] += kSinkNorm * std::sqrt(static_cast<double>(d)) * m.key_gain * m.sink_direction[c];
    synth::apply_rope(row, d, t, inv_freq);
  }
  return k;
}

// Values of one head: regime-dependent spread (milder than the keys'), no channel outliers,
// a near-zero value at the sink.
std::vector<double> head_values(const SynthOptions& o, const HeadModel& m, const std::vector<double>& scale, int layer,
                                int head) {
  Rng rng(o.seed, {static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(head), synth::kStreamValues});
  const int d = o.head_dim;
  std::vector<double> v(static_cast<std::size_t>(o.tokens) * d);
  for (std::int64_t t = 0; t < o.tokens; ++t) {
    const double s = (t == 0 ? 0.1 : std::sqrt(scale[t])) * m.value_gain;
    for (int c = 0; c < d; ++c) v[static_cast<std::size_t>(t) * d + c] = s * rng.normal();
  }
  return v;
}

// Keys centred over tokens 1..L-1 with outlier channels zeroed and the sink direction
// projected out: the directions queries aim at.
std::vector<double> centred_keys(const std::vector<double>& k, const HeadModel& m, std::int64_t tokens, int d) {
  std::vector<double> mean(d, 0.0);
  for (std::int64_t t = 1; t < tokens; ++t)
    for (int c = 0; c < d; ++c) mean[c] += k[static_cast<std::size_t>(t) * d + c];
  for (double& x : mean) x /= static_cast<double>(std::max<std::int64_t>(1, tokens - 1));
  std::vector<double> out(k.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    double* row = &out[static_cast<std::size_t>(t) * d];
    double along_sink = 0.0;
    for (int c = 0; c < d; ++c) {
      const std::size_t i = static_cast<std::size_t>(t) * d + c;
      row[c] = m.outlier_value[c] != 0.0 ? 0.0 : k[i] - mean[c];
      along_sink += row[c] * m.sink_direction[c];
    }
    // Orthogonal to the sink direction, so that aiming at a key does not also move the
    // sink's logit (whose key is mostly that direction).
    for (int c = 0; c < d; ++c) row[c] -= along_sink * m.sink_direction[c];
  }
  return out;
}

// Queries of one q head at the probes, aimed at up to three distinct earlier content keys
// (logits about 10, 8, 7; never a noise token: queries look for content) and at the sink
// (about 11): q is the combination of the targets' centred directions and the sink direction
// whose dot products with those keys are exactly the wanted logits (a small linear solve),
// plus a little noise. Attention is peaky on a few keys. noise_mask: [L], all zeros for a
// clean trace (whose queries therefore do not depend on it).
std::vector<double> head_queries(const SynthOptions& o, const HeadModel& m, const std::vector<double>& keys,
                                 const std::vector<double>& centred, const std::vector<std::int32_t>& q_pos,
                                 const std::vector<std::uint8_t>& noise_mask, int layer, int q_head) {
  Rng rng(o.seed, {static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(q_head), synth::kStreamQueries});
  const int d = o.head_dim;
  const double sqrt_d = std::sqrt(static_cast<double>(d));
  std::vector<double> q(q_pos.size() * d, 0.0);
  const double target_logits[3] = {10.0, 8.0, 7.0};
  for (std::size_t i = 0; i < q_pos.size(); ++i) {
    const std::int64_t p = q_pos[i];
    std::vector<std::int64_t> tokens;  // constrained keys: the targets, then the sink (token 0)
    std::vector<double> logits;
    const auto content =
        static_cast<std::int64_t>(std::count(noise_mask.begin() + 1, noise_mask.begin() + p + 1, std::uint8_t{0}));
    for (int j = 0; j < 3 && static_cast<std::int64_t>(tokens.size()) < content; ++j) {
      std::int64_t target;
      do target = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(p)));
      while (noise_mask[static_cast<std::size_t>(target)] ||
             std::find(tokens.begin(), tokens.end(), target) != tokens.end());
      tokens.push_back(target);
      logits.push_back(target_logits[j] + rng.uniform());
    }
    tokens.push_back(0);
    logits.push_back(11.0 + rng.uniform());
    const int n = static_cast<int>(tokens.size());
    Eigen::MatrixXd basis(d, n);  // columns: centred target keys, then the sink direction
    Eigen::MatrixXd constrained(d, n);
    for (int j = 0; j < n; ++j)
      for (int c = 0; c < d; ++c) {
        basis(c, j) = j + 1 < n ? centred[static_cast<std::size_t>(tokens[j]) * d + c] : m.sink_direction[c];
        constrained(c, j) = keys[static_cast<std::size_t>(tokens[j]) * d + c];
      }
    Eigen::VectorXd wanted(n);
    for (int j = 0; j < n; ++j) wanted(j) = logits[j] * sqrt_d;
    const Eigen::VectorXd coefficients = (constrained.transpose() * basis).colPivHouseholderQr().solve(wanted);
    const Eigen::VectorXd direction = basis * coefficients;
    for (int c = 0; c < d; ++c) q[i * d + c] = direction(c) + 0.1 * rng.normal();
  }
  return q;
}

void store_head(const std::vector<double>& values, MutTensor out) {
  for (std::size_t i = 0; i < values.size(); ++i)
    store_element(out, static_cast<std::int64_t>(i), static_cast<float>(values[i]));
}

}  // namespace

TraceMeta synthetic_meta(const SynthOptions& o) {
  o.validate();
  TraceMeta meta;
  meta.model = o.model;
  meta.num_layers = o.layers;
  meta.num_q_heads = o.q_heads;
  meta.num_kv_heads = o.kv_heads;
  meta.head_dim = o.head_dim;
  meta.rope_applied = true;
  meta.source = "synthetic";
  meta.prompt_kind = o.kind;
  meta.seed = o.seed;
  meta.tokens = o.tokens;
  meta.kv_dtype = o.dtype;
  meta.q_pos = probe_positions(o.tokens, o.probes);
  if (o.noise_rate > 0.0) meta.noise_mask = make_noise_mask(o.tokens, o.noise_rate, o.seed);
  meta.text = "synthetic " + o.kind + " trace (dgq gen-trace, seed " + std::to_string(o.seed) +
              "); regimes: " + synth::describe_regimes(synth::make_regimes(o.kind, o.tokens, o.seed));
  meta.generator_version = kGeneratorVersion;
  meta.generator_options = generator_options_text(o);
  return meta;
}

LayerData synthesize_layer(const SynthOptions& o, int layer) {
  o.validate();
  if (layer < 0 || layer >= o.layers)
    throw ParameterError("gen-trace: layer " + std::to_string(layer) + " out of range");
  const auto scale = token_scales(o);
  const auto inv_freq = synth::rope_inverse_frequencies(o.head_dim, o.rope_theta);
  const auto q_pos = probe_positions(o.tokens, o.probes);
  const int group = o.q_heads / o.kv_heads;
  const auto noise_mask = o.noise_rate > 0.0 ? make_noise_mask(o.tokens, o.noise_rate, o.seed)
                                             : std::vector<std::uint8_t>(static_cast<std::size_t>(o.tokens), 0);
  LayerData out;
  out.layer = layer;
  out.k = Tensor3(o.dtype, o.kv_heads, o.tokens, o.head_dim);
  out.v = Tensor3(o.dtype, o.kv_heads, o.tokens, o.head_dim);
  out.q = Tensor3(o.dtype, o.q_heads, static_cast<std::int64_t>(q_pos.size()), o.head_dim);
  // Every head draws from its own PRNG streams, so the bytes do not depend on the thread count.
#pragma omp parallel for schedule(dynamic, 1)
  for (int head = 0; head < o.kv_heads; ++head) {
    const HeadModel model = synth::make_head_model(o, layer, head);
    const auto keys = head_keys(o, model, scale, inv_freq, layer, head);
    store_head(keys, out.k.head(head));
    store_head(head_values(o, model, scale, layer, head), out.v.head(head));
    const auto centred = centred_keys(keys, model, o.tokens, o.head_dim);
    for (int q_head = head * group; q_head < (head + 1) * group; ++q_head)
      store_head(head_queries(o, model, keys, centred, q_pos, noise_mask, layer, q_head), out.q.head(q_head));
  }
  if (o.noise_rate > 0.0) inject_noise(out, noise_mask, o.seed);
  return out;
}

void write_synthetic_trace(const SynthOptions& o, const std::string& path, ProgressMode progress_mode) {
  const TraceMeta meta = synthetic_meta(o);
  TraceWriter writer(path, meta,
                     config_hash("generate\ngenerator_version=" + std::to_string(*meta.generator_version) +
                                 "\ngenerator_options=" + meta.generator_options + "\n"));
  Progress progress(progress_mode, "gen-trace " + path, o.layers);
  for (int layer = 0; layer < o.layers; ++layer) {
    writer.write_layer(synthesize_layer(o, layer));
    progress.finished("layer(s)");
  }
  writer.finish();
}

}  // namespace dgq::sim

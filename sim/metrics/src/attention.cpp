// Attention metrics of one probe query (docs/replay.md). Sums run in index order so that
// the numbers are reproducible and a numpy recomputation can follow them exactly.
#include "dgq/sim/metrics/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dgq::sim {

namespace {

// q·k in 8 fp64 lanes. The product of two fp32 values is exact in fp64, so acc + a*b rounds
// once, like an fma would (written as mul + add because GCC vectorizes this form only).
inline double dot_lanes(const float* a, const float* b, std::int64_t n) {
  constexpr int kLanes = 8;
  double lane[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      lane[j] += static_cast<double>(a[i + j]) * static_cast<double>(b[i + j]);
    }
  }
  for (; i < n; ++i) lane[i % kLanes] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

}  // namespace

double dot_fp64(const float* a, const float* b, std::int64_t n) { return dot_lanes(a, b, n); }

void attention_logits(const float* q, const float* keys, std::int64_t n, std::int64_t d, std::vector<double>& logits) {
  const double scale = std::sqrt(static_cast<double>(d));
  logits.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) logits[j] = dot_lanes(q, keys + j * d, d) / scale;
}

void softmax(std::span<const double> logits, std::vector<double>& p) {
  p.resize(logits.size());
  if (logits.empty()) return;
  const double max = *std::max_element(logits.begin(), logits.end());
  double z = 0.0;
  for (std::size_t j = 0; j < logits.size(); ++j) {
    p[j] = std::exp(logits[j] - max);
    z += p[j];
  }
  for (double& x : p) x /= z;
}

void attention_output(std::span<const double> p, const float* values, const std::int64_t* rows, std::int64_t d,
                      std::vector<double>& o) {
  o.assign(static_cast<std::size_t>(d), 0.0);
  for (std::size_t j = 0; j < p.size(); ++j) {
    const std::int64_t row = rows ? rows[j] : static_cast<std::int64_t>(j);
    const float* v = values + row * d;
    const double pj = p[j];
    for (std::int64_t c = 0; c < d; ++c) o[c] += pj * static_cast<double>(v[c]);
  }
}

double kl_divergence(std::span<const double> p, std::span<const double> p_hat) {
  double kl = 0.0;
  for (std::size_t j = 0; j < p.size(); ++j) {
    // Below the floor p_j's own logarithm would meet the floored one: p_j (ln p_j - ln 1e-300)
    // < 0 even for p̂ = p. Such a term is below 1e-297 in magnitude; it is left out.
    if (p[j] > kKlProbabilityFloor) kl += p[j] * (std::log(p[j]) - std::log(std::max(p_hat[j], kKlProbabilityFloor)));
  }
  // Gibbs: KL >= 0. A sum a few ulps below 0 (two near-identical distributions, each normalised
  // with its own rounding) is rounding, reported as 0.
  return std::max(kl, 0.0);
}

double total_variation(std::span<const double> p, std::span<const double> p_hat) {
  double sum = 0.0;
  for (std::size_t j = 0; j < p.size(); ++j) sum += std::fabs(p[j] - p_hat[j]);
  return 0.5 * sum;
}

namespace {

// Top-k by one pass that keeps the best k so far in order (k <= 32, n up to 10^5 or more):
// most keys fail the first comparison with the current k-th best.
void top_k_into(std::span<const double> p, std::int64_t k, std::vector<std::int64_t>& top) {
  const auto n = static_cast<std::int64_t>(p.size());
  k = std::clamp<std::int64_t>(k, 0, n);
  top.clear();
  if (k == 0) return;
  // Larger probability first; among equal probabilities the smaller index wins. Keys come in
  // increasing index order, so a later key displaces an equal one only if strictly larger.
  for (std::int64_t j = 0; j < n; ++j) {
    const double v = p[j];
    if (static_cast<std::int64_t>(top.size()) == k && !(v > p[top.back()])) continue;
    std::size_t pos = top.size();
    while (pos > 0 && v > p[top[pos - 1]]) --pos;
    if (static_cast<std::int64_t>(top.size()) == k) top.pop_back();
    top.insert(top.begin() + static_cast<std::ptrdiff_t>(pos), j);
  }
}

}  // namespace

std::vector<std::int64_t> top_k_indices(std::span<const double> p, std::int64_t k) {
  std::vector<std::int64_t> top;
  top_k_into(p, k, top);
  return top;
}

double top_k_recall(std::span<const std::int64_t> top, std::span<const std::int64_t> top_hat, std::int64_t k) {
  k = std::min<std::int64_t>(k, static_cast<std::int64_t>(top.size()));
  if (k <= 0) return 1.0;
  std::int64_t common = 0;
  for (std::int64_t i = 0; i < k; ++i) {  // k <= 32: a quadratic scan beats sorting
    for (std::int64_t j = 0; j < k; ++j) {
      if (top[i] == top_hat[j]) {
        ++common;
        break;
      }
    }
  }
  return static_cast<double>(common) / static_cast<double>(k);
}

double top_k_recall(std::span<const double> p, std::span<const double> p_hat, std::int64_t k) {
  return top_k_recall(top_k_indices(p, k), top_k_indices(p_hat, k), k);
}

double relative_l2(std::span<const double> o, std::span<const double> o_hat) {
  double err = 0.0, ref = 0.0;
  for (std::size_t c = 0; c < o.size(); ++c) {
    const double e = o_hat[c] - o[c];
    err += e * e;
    ref += o[c] * o[c];
  }
  if (ref == 0.0) return err == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(err) / std::sqrt(ref);
}

double cosine_similarity(std::span<const double> o, std::span<const double> o_hat) {
  double dot = 0.0, a = 0.0, b = 0.0;
  for (std::size_t c = 0; c < o.size(); ++c) {
    dot += o[c] * o_hat[c];
    a += o[c] * o[c];
    b += o_hat[c] * o_hat[c];
  }
  if (a == 0.0 || b == 0.0) return (a == 0.0 && b == 0.0) ? 1.0 : 0.0;
  return dot / (std::sqrt(a) * std::sqrt(b));
}

void compute_probe_attention(const float* q, const float* k, const float* v, std::int64_t n, std::int64_t d,
                             ProbeAttention& out) {
  attention_logits(q, k, n, d, out.logits);
  softmax(out.logits, out.p);
  attention_output(out.p, v, nullptr, d, out.o);
  top_k_into(out.p, kTopKMax, out.top);
}

void compute_head_attention(const float* q, const float* k, const float* v, const std::int32_t* q_pos,
                            std::size_t probes, std::int64_t d, std::vector<ProbeAttention>& out) {
  out.resize(probes);
  if (probes == 0) return;
  const double scale = std::sqrt(static_cast<double>(d));
  const std::int64_t keys = static_cast<std::int64_t>(q_pos[probes - 1]) + 1;
  for (std::size_t t = 0; t < probes; ++t) out[t].logits.resize(static_cast<std::size_t>(q_pos[t]) + 1);
  // Key j is attended by the probes t >= first[j] (positions increase with t).
  std::size_t first = 0;
  for (std::int64_t j = 0; j < keys; ++j) {
    while (q_pos[first] < j) ++first;
    const float* kj = k + j * d;
    for (std::size_t t = first; t < probes; ++t) out[t].logits[j] = dot_lanes(q + t * d, kj, d) / scale;
  }
  for (std::size_t t = 0; t < probes; ++t) {
    softmax(out[t].logits, out[t].p);
    out[t].o.assign(static_cast<std::size_t>(d), 0.0);
  }
  first = 0;
  for (std::int64_t j = 0; j < keys; ++j) {  // o_t[c] += p_t[j] v_j[c], j increasing for every t
    while (q_pos[first] < j) ++first;
    const float* vj = v + j * d;
    for (std::size_t t = first; t < probes; ++t) {
      const double pj = out[t].p[j];
      double* o = out[t].o.data();
      for (std::int64_t c = 0; c < d; ++c) o[c] += pj * static_cast<double>(vj[c]);
    }
  }
  for (std::size_t t = 0; t < probes; ++t) top_k_into(out[t].p, kTopKMax, out[t].top);
}

ProbeMetrics compare_attention(const ProbeAttention& ref, const ProbeAttention& hat) {
  ProbeMetrics m;
#define DGQ_COMPUTE_PROBE_METRIC(name, unit, better, value, description) m.name = value;
  DGQ_PROBE_METRICS(DGQ_COMPUTE_PROBE_METRIC)
#undef DGQ_COMPUTE_PROBE_METRIC
  return m;
}

namespace {

double noise_mass(std::span<const double> p, const std::uint8_t* noise_mask) {
  double mass = 0.0;
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (noise_mask[j]) mass += p[j];
  }
  return mass;
}

// The clean keys' logits, softmax and output of one attention.
void restrict_to_clean(const ProbeAttention& full, const std::vector<std::int64_t>& rows, const float* v,
                       std::int64_t d, ProbeAttention& out) {
  out.logits.resize(rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) out.logits[j] = full.logits[rows[j]];
  softmax(out.logits, out.p);
  attention_output(out.p, v, rows.data(), d, out.o);
  top_k_into(out.p, kTopKMax, out.top);
}

}  // namespace

NoiseProbeMetrics compare_attention_noise(const ProbeAttention& ref, const ProbeAttention& hat, const float* v,
                                          const float* v_hat, std::int64_t d, const std::uint8_t* noise_mask,
                                          NoiseScratch& s) {
  NoiseProbeMetrics m;
  m.noise_mass = noise_mass(ref.p, noise_mask);
  m.noise_mass_hat = noise_mass(hat.p, noise_mask);
  s.rows.clear();
  for (std::size_t j = 0; j < ref.p.size(); ++j) {
    if (!noise_mask[j]) s.rows.push_back(static_cast<std::int64_t>(j));
  }
  if (s.rows.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const ProbeMetricInfo& info : kProbeMetrics) m.clean.*info.field = nan;
    return m;
  }
  restrict_to_clean(ref, s.rows, v, d, s.ref);
  restrict_to_clean(hat, s.rows, v_hat, d, s.hat);
  m.clean = compare_attention(s.ref, s.hat);
  return m;
}

}  // namespace dgq::sim

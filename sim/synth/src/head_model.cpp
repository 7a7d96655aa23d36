#include "head_model.hpp"

#include <algorithm>
#include <cmath>

#include "prng.hpp"

namespace dgq::sim::synth {

HeadModel make_head_model(const SynthOptions& o, int layer, int head) {
  Rng rng(o.seed, {static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(head), kStreamHeadShape});
  const int d = o.head_dim;
  HeadModel m;
  m.channel_mean.resize(d);
  m.channel_spread.resize(d);
  m.outlier_value.assign(d, 0.0);
  for (int c = 0; c < d; ++c) {
    m.channel_mean[c] = 0.5 * rng.normal();
    m.channel_spread[c] = 0.6 + 0.8 * rng.uniform();
  }
  // Deeper layers carry larger activations; heads differ by +-20%.
  const double depth = o.layers > 1 ? static_cast<double>(layer) / (o.layers - 1) : 0.0;
  m.key_gain = (0.8 + 0.4 * depth) * (0.8 + 0.4 * rng.uniform());
  m.value_gain = 0.8 + 0.4 * rng.uniform();

  const int half = d / 2;
  const int band = std::min(half, std::max({o.outlier_channels, d / 16, 1}));
  std::vector<int> candidates;
  for (int c = half - band; c < half; ++c) candidates.push_back(c);
  for (int i = 0; i < o.outlier_channels && !candidates.empty(); ++i) {
    const auto pick = static_cast<std::size_t>(rng.below(candidates.size()));
    const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
    m.outlier_value[candidates[pick]] = sign * o.outlier_scale * (0.85 + 0.3 * rng.uniform());
    candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
  }

  m.sink_direction.assign(d, 0.0);
  double norm2 = 0.0;
  for (int c = 0; c < d; ++c) {
    if (m.outlier_value[c] != 0.0) continue;
    m.sink_direction[c] = rng.normal();
    norm2 += m.sink_direction[c] * m.sink_direction[c];
  }
  const double norm = norm2 > 0.0 ? std::sqrt(norm2) : 1.0;
  for (double& x : m.sink_direction) x /= norm;
  return m;
}

std::vector<double> rope_inverse_frequencies(int head_dim, double theta) {
  const int half = head_dim / 2;
  std::vector<double> inv(half);
  for (int i = 0; i < half; ++i) inv[i] = std::pow(theta, -2.0 * i / head_dim);
  return inv;
}

void apply_rope(double* x, int head_dim, std::int64_t pos, const std::vector<double>& inv) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * inv[i];
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = x[i], b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = a * s + b * c;
  }
}

}  // namespace dgq::sim::synth

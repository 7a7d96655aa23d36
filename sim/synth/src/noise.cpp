// Noise tokens: the "10% random characters" experiment. In a real model a random character
// still goes through the same RMSNorm and projections as any token, so its key has an
// ordinary norm and carries the persistent outlier channels (they come from the projection's
// channel structure, not from the token); what is unusual is its direction. Queries aim at
// content tokens and the sink, so a noise key receives little attention. Values: ordinary
// scale, random direction. The real SmolLM2 traces (docs/real-traces.md) behave this way.
//
// inject_noise works on any trace (it does not need the generator's head model): the
// "ordinary" statistics of a noise token are those of the clean tokens around it.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dgq/errors.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "prng.hpp"

namespace dgq::sim {

std::vector<std::uint8_t> make_noise_mask(std::int64_t tokens, double rate, std::uint64_t seed) {
  if (!(rate >= 0.0 && rate < 1.0)) throw ParameterError("noise rate must be in [0, 1), got " + std::to_string(rate));
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(std::max<std::int64_t>(tokens, 0)), 0);
  if (tokens < 2) return mask;
  // Partial Fisher-Yates over tokens 1..L-1: exactly round(rate (L-1)) distinct tokens.
  std::vector<std::int64_t> pool(static_cast<std::size_t>(tokens - 1));
  std::iota(pool.begin(), pool.end(), std::int64_t{1});
  const auto count = static_cast<std::size_t>(std::llround(rate * static_cast<double>(tokens - 1)));
  synth::Rng rng(seed, {synth::kStreamNoiseMask});
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng.below(pool.size() - i));
    std::swap(pool[i], pool[j]);
    mask[static_cast<std::size_t>(pool[i])] = 1;
  }
  return mask;
}

namespace {

// How many clean neighbours define a noise token's local statistics: enough for stable
// per-channel moments, few enough to follow the variance regimes.
constexpr std::int64_t kNeighbours = 64;
// A channel whose clean RMS exceeds this many times the median channel RMS is a persistent
// outlier channel (the generator's are 10-20x; ordinary channels spread about 2x).
constexpr double kOutlierFactor = 4.0;

// The tokens whose statistics count as ordinary: unmasked, and not the sink (token 0, whose
// key is far larger than any other) unless nothing else is left.
std::vector<std::int64_t> ordinary_tokens(const std::vector<std::uint8_t>& mask) {
  std::vector<std::int64_t> tokens;
  for (std::size_t t = 1; t < mask.size(); ++t)
    if (!mask[t]) tokens.push_back(static_cast<std::int64_t>(t));
  if (tokens.empty() && !mask.empty()) tokens.push_back(0);
  return tokens;
}

// Running sums of x and x^2 per channel over the ordinary tokens (row i: the first i of them).
struct PrefixMoments {
  std::int64_t channels = 0;
  std::vector<double> sum, sum_sq;  // [(n+1) * channels]

  PrefixMoments(ConstTensor head, const std::vector<std::int64_t>& tokens) : channels(head.channels) {
    const std::size_t n = tokens.size(), d = static_cast<std::size_t>(channels);
    sum.assign((n + 1) * d, 0.0);
    sum_sq.assign((n + 1) * d, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < d; ++c) {
        const double x = load_element(head, tokens[i] * channels + static_cast<std::int64_t>(c));
        sum[(i + 1) * d + c] = sum[i * d + c] + x;
        sum_sq[(i + 1) * d + c] = sum_sq[i * d + c] + x * x;
      }
  }
  // Mean and variance of channel c over ordinary tokens [lo, hi).
  double mean(std::size_t lo, std::size_t hi, std::size_t c) const {
    const std::size_t d = static_cast<std::size_t>(channels);
    return (sum[hi * d + c] - sum[lo * d + c]) / static_cast<double>(hi - lo);
  }
  double variance(std::size_t lo, std::size_t hi, std::size_t c) const {
    const std::size_t d = static_cast<std::size_t>(channels);
    const double m = mean(lo, hi, c);
    return std::max(0.0, (sum_sq[hi * d + c] - sum_sq[lo * d + c]) / static_cast<double>(hi - lo) - m * m);
  }
};

// Channels whose RMS over the ordinary tokens is far above the median channel's.
std::vector<bool> outlier_channels(const PrefixMoments& moments, std::size_t n) {
  const std::size_t d = static_cast<std::size_t>(moments.channels);
  std::vector<double> rms(d);
  for (std::size_t c = 0; c < d; ++c) rms[c] = std::sqrt(moments.sum_sq[n * d + c] / static_cast<double>(n));
  std::vector<double> sorted = rms;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(d / 2), sorted.end());
  const double median = sorted[d / 2];
  std::vector<bool> outlier(d);
  for (std::size_t c = 0; c < d; ++c) outlier[c] = rms[c] > kOutlierFactor * median;
  return outlier;
}

// Overwrites every masked token of one head with an ordinary-looking random vector: the local
// mean of its clean neighbours, plus on outlier channels their usual per-channel jitter, plus
// on the other channels an isotropic random direction scaled to the neighbours' typical
// deviation norm there.
void overwrite_masked(MutTensor head, const std::vector<std::uint8_t>& mask, synth::Rng& rng) {
  const auto tokens = ordinary_tokens(mask);
  if (tokens.empty()) return;
  const ConstTensor view = head;
  const PrefixMoments moments(view, tokens);
  const std::size_t n = tokens.size(), d = static_cast<std::size_t>(head.channels);
  const auto outlier = outlier_channels(moments, n);
  std::vector<double> row(d);
  for (std::int64_t t = 0; t < head.tokens; ++t) {
    if (!mask[static_cast<std::size_t>(t)]) continue;
    // The kNeighbours ordinary tokens nearest in order around t (clamped at the ends).
    const auto at = static_cast<std::size_t>(std::lower_bound(tokens.begin(), tokens.end(), t) - tokens.begin());
    const std::size_t width = std::min<std::size_t>(n, kNeighbours);
    const std::size_t lo = std::min(n - width, at > width / 2 ? at - width / 2 : 0), hi = lo + width;
    double deviation_sq = 0.0, direction_sq = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double z = rng.normal();
      if (outlier[c]) {
        row[c] = moments.mean(lo, hi, c) + std::sqrt(moments.variance(lo, hi, c)) * z;
      } else {
        row[c] = z;
        deviation_sq += moments.variance(lo, hi, c);
        direction_sq += z * z;
      }
    }
    const double scale = direction_sq > 0.0 ? std::sqrt(deviation_sq / direction_sq) : 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double x = outlier[c] ? row[c] : moments.mean(lo, hi, c) + scale * row[c];
      store_element(head, t * head.channels + static_cast<std::int64_t>(c), static_cast<float>(x));
    }
  }
}
}  // namespace

void inject_noise(LayerData& layer, const std::vector<std::uint8_t>& mask, std::uint64_t seed) {
  if (static_cast<std::int64_t>(mask.size()) != layer.k.tokens || layer.v.tokens != layer.k.tokens)
    throw ParameterError("noise mask has " + std::to_string(mask.size()) + " entries for " +
                         std::to_string(layer.k.tokens) + " tokens");
  for (std::int64_t head = 0; head < layer.k.heads; ++head) {
    synth::Rng rng(
        seed, {static_cast<std::uint64_t>(layer.layer), static_cast<std::uint64_t>(head), synth::kStreamNoiseValues});
    overwrite_masked(layer.k.head(head), mask, rng);
    overwrite_masked(layer.v.head(head), mask, rng);
  }
}

}  // namespace dgq::sim

// Noise tokens: the "10% random characters" experiment. A noise token's K and V are
// high-variance random vectors with none of the structure of real tokens.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dgq/errors.hpp"
#include "dgq/sim/synth.hpp"
#include "synth/prng.hpp"

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
// Root mean square of the unmasked tokens of one head: the scale noise is measured against.
double clean_rms(ConstTensor head, const std::vector<std::uint8_t>& mask) {
  double sum = 0.0;
  std::int64_t count = 0;
  for (std::int64_t t = 0; t < head.tokens; ++t) {
    if (mask[static_cast<std::size_t>(t)]) continue;
    for (std::int64_t c = 0; c < head.channels; ++c) {
      const double x = load_element(head, t * head.channels + c);
      sum += x * x;
    }
    count += head.channels;
  }
  return count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 1.0;
}

constexpr double kNoiseScale = 4.0;  // noise tokens' spread relative to the clean RMS

void overwrite_masked(MutTensor head, const std::vector<std::uint8_t>& mask, double sigma, synth::Rng& rng) {
  for (std::int64_t t = 0; t < head.tokens; ++t) {
    if (!mask[static_cast<std::size_t>(t)]) continue;
    for (std::int64_t c = 0; c < head.channels; ++c)
      store_element(head, t * head.channels + c, static_cast<float>(sigma * rng.normal()));
  }
}
}  // namespace

void inject_noise(LayerData& layer, const std::vector<std::uint8_t>& mask, std::uint64_t seed) {
  if (static_cast<std::int64_t>(mask.size()) != layer.k.tokens || layer.v.tokens != layer.k.tokens)
    throw ParameterError("noise mask has " + std::to_string(mask.size()) + " entries for " +
                         std::to_string(layer.k.tokens) + " tokens");
  for (std::int64_t head = 0; head < layer.k.heads; ++head) {
    synth::Rng rng(seed, {static_cast<std::uint64_t>(layer.layer), static_cast<std::uint64_t>(head),
                          synth::kStreamNoiseValues});
    MutTensor k = layer.k.head(head), v = layer.v.head(head);
    const double k_sigma = kNoiseScale * clean_rms(k, mask);
    const double v_sigma = kNoiseScale * clean_rms(v, mask);
    overwrite_masked(k, mask, k_sigma, rng);
    overwrite_masked(v, mask, v_sigma, rng);
  }
}

}  // namespace dgq::sim

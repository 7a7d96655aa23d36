#include "channel_scales.hpp"

#include <algorithm>
#include <cmath>

namespace dgq::schemes::dgq3 {

std::vector<float> channel_scales(const float* x, std::int64_t calib, std::int64_t channels, bool pair_halves,
                                  double power) {
  // Sums of squares in fp64, token by token in increasing order (the order is the rule's, so the
  // bytes do not depend on anything else).
  std::vector<double> mean_square(static_cast<std::size_t>(channels), 0.0);
  for (std::int64_t t = 0; t < calib; ++t) {
    const float* row = x + t * channels;
    for (std::int64_t d = 0; d < channels; ++d) {
      const double v = row[d];
      mean_square[static_cast<std::size_t>(d)] += v * v;
    }
  }
  for (double& m : mean_square) m /= static_cast<double>(calib);
  if (pair_halves) {
    const std::int64_t half = channels / 2;
    for (std::int64_t d = 0; d < half; ++d) {
      const auto a = static_cast<std::size_t>(d), b = static_cast<std::size_t>(d + half);
      const double shared = (mean_square[a] + mean_square[b]) / 2.0;
      mean_square[a] = mean_square[b] = shared;
    }
  }
  std::vector<double> rms(mean_square.size());
  std::transform(mean_square.begin(), mean_square.end(), rms.begin(), [](double m) { return std::sqrt(m); });
  const double largest = rms.empty() ? 0.0 : *std::max_element(rms.begin(), rms.end());
  std::vector<float> scales(rms.size(), 1.0f);
  if (!(largest > 0.0)) return scales;  // an all-zero prefix: nothing to equalise
  const double floor = largest / 64.0;
  for (std::size_t d = 0; d < rms.size(); ++d) {
    const float s = static_cast<float>(std::pow(std::max(rms[d], floor) / largest, power));
    // A scale that underflows fp32 (rows of subnormals) would turn later values into inf.
    scales[d] = std::isnormal(s) ? s : 1.0f;
  }
  return scales;
}

}  // namespace dgq::schemes::dgq3

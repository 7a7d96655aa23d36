#include "symmetric_codes.hpp"

#include <cmath>

namespace dgq::schemes::dgq3 {

float signed_extreme(const float* y, std::int64_t n) {
  float extreme = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::fabs(y[i]) > std::fabs(extreme)) extreme = y[i];
  }
  return extreme;
}

void symmetric_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u) {
  const float lo = -static_cast<float>(1 << (bits - 1)), hi = static_cast<float>((1 << (bits - 1)) - 1);
  for (std::int64_t i = 0; i < n; ++i) {
    const float q = std::fmin(std::fmax(rintf(y[i] * inverse), lo), hi);
    u[i] = static_cast<std::uint8_t>(static_cast<int>(q) + (1 << (bits - 1)));
  }
}

void symmetric_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int>(u[i]) - (1 << (bits - 1))) * d;
}

void window_mean(const float* ring, std::int64_t window, std::int64_t count, std::int64_t channels, float* mean) {
  const std::int64_t held = count < window ? count : window;
  for (std::int64_t c = 0; c < channels; ++c) mean[c] = 0.0f;
  if (held == 0) return;
  for (std::int64_t j = count - held; j < count; ++j) {
    const float* r = ring + (j % window) * channels;
    for (std::int64_t c = 0; c < channels; ++c) mean[c] = mean[c] + r[c];
  }
  const auto n = static_cast<float>(held);
  for (std::int64_t c = 0; c < channels; ++c) mean[c] = mean[c] / n;
}

}  // namespace dgq::schemes::dgq3

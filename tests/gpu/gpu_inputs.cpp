#include "gpu_inputs.hpp"

#include <cmath>
#include <memory>

namespace dgq::gpu_test {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

HostUnit make_unit(DType dtype, std::int64_t tokens, std::int64_t channels, const Pattern& value) {
  HostUnit u;
  u.dtype = dtype;
  u.tokens = tokens;
  u.channels = channels;
  u.bytes.resize(static_cast<std::size_t>(tokens * channels) * dtype_size(dtype));
  MutTensor view = u.view();
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t d = 0; d < channels; ++d) store_element(view, t * channels + d, value(t, d));
  return u;
}

// Patterns are called in (t, d) row-major order by make_unit, so a generator captured by a
// pattern yields the same sequence for the same seed.
Pattern normal_pattern(std::uint64_t seed, float sigma) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng, sigma](std::int64_t, std::int64_t) { return static_cast<float>(rng->normal()) * sigma; };
}

Pattern variance_steps(std::uint64_t seed, std::int64_t period) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng, period](std::int64_t t, std::int64_t) {
    static constexpr float kSigma[4] = {1.0f, 8.0f, 0.25f, 3.0f};
    return static_cast<float>(rng->normal()) * kSigma[(t / period) % 4];
  };
}

Pattern outlier_channels(std::uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng](std::int64_t, std::int64_t d) {
    const float scale = (d % 37 == 3 || d == 0) ? 100.0f : 1.0f;
    return static_cast<float>(rng->normal()) * scale;
  };
}

Pattern constant_rows(std::uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  auto row_value = std::make_shared<float>(0.0f);
  auto last_t = std::make_shared<std::int64_t>(-1);
  return [rng, row_value, last_t](std::int64_t t, std::int64_t) {
    if (t != *last_t) {
      *last_t = t;
      *row_value = static_cast<float>(rng->normal()) * 4.0f;
    }
    return *row_value;
  };
}

Pattern all_equal(float v) {
  return [v](std::int64_t, std::int64_t) { return v; };
}

Pattern fp16_extremes(std::uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng](std::int64_t, std::int64_t) {
    switch (rng->next() % 6) {
      case 0: return 65504.0f;
      case 1: return -65504.0f;
      case 2: return static_cast<float>(rng->next() % 1024) * 5.9604644775390625e-8f;  // fp16 subnormal
      case 3: return -static_cast<float>(rng->next() % 1024) * 5.9604644775390625e-8f;
      case 4: return -0.0f;
      default: return static_cast<float>(rng->normal());
    }
  };
}

Pattern fp32_denormals(std::uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng](std::int64_t, std::int64_t) { return static_cast<float>(rng->normal() * 1e-40); };
}

}  // namespace dgq::gpu_test

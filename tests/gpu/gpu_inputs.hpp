#pragma once
// Inputs of the differential suite: owned host tensors filled by named value patterns, from
// a seeded generator of our own (bit-identical on every platform).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq::gpu_test {

struct HostUnit {
  DType dtype = DType::f16;
  std::int64_t tokens = 0, channels = 0;
  std::vector<std::byte> bytes;
  ConstTensor view() const { return {bytes.data(), dtype, tokens, channels}; }
  MutTensor view() { return {bytes.data(), dtype, tokens, channels}; }
};

// splitmix64: tiny, fully specified, so a seed means the same data everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1)
  double normal();   // Box-Muller; only shapes test data, not part of any compared result
 private:
  std::uint64_t state_;
};

// value(t, d) as fp32, stored in dtype with round-to-nearest-even.
using Pattern = std::function<float(std::int64_t t, std::int64_t d)>;
HostUnit make_unit(DType dtype, std::int64_t tokens, std::int64_t channels, const Pattern& value);

// Patterns (seeded where random).
Pattern normal_pattern(std::uint64_t seed, float sigma = 1.0f);
// Normal noise whose scale changes every `period` tokens (sigma cycles through 1, 8, 0.25, 3):
// segments that must be found.
Pattern variance_steps(std::uint64_t seed, std::int64_t period);
// A few channels 100x larger than the rest (the K-cache outlier pattern).
Pattern outlier_channels(std::uint64_t seed);
Pattern constant_rows(std::uint64_t seed);  // each token one value
Pattern all_equal(float v);
Pattern fp16_extremes(std::uint64_t seed);   // +-65504, fp16 subnormals, zeros of both signs
Pattern fp32_denormals(std::uint64_t seed);  // values around 1e-40 (fp32 subnormal)

}  // namespace dgq::gpu_test

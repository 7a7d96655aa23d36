#pragma once
// The generator's own PRNG, so that a seed gives the same trace with any standard library:
// splitmix64 to derive independent streams, xoshiro256** for the numbers, Box-Muller for
// normals (std::normal_distribution's algorithm is implementation-defined).
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace dgq::sim::synth {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  // One independent stream per (seed, path...), e.g. Rng(seed, {layer, head, kStreamKeys}).
  Rng(std::uint64_t seed, std::initializer_list<std::uint64_t> path) {
    std::uint64_t mix = seed;
    for (std::uint64_t p : path) {
      mix ^= splitmix64(mix) + p * 0xd1342543de82ef95ull;
    }
    std::uint64_t sm = mix;
    for (auto& word : s_) word = splitmix64(sm);
  }

  std::uint64_t next() {  // xoshiro256**
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in (0, 1]: 53 random bits, never 0 (log() below needs that).
  double uniform() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0 (Lemire's multiply; the tiny bias is irrelevant here).
  // __extension__: the 128-bit product is a GCC/Clang type, which -Wpedantic would flag.
  std::uint64_t below(std::uint64_t n) {
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 6.283185307179586 * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Stream identifiers (the last element of an Rng path).
enum Stream : std::uint64_t {
  kStreamRegimes = 1,
  kStreamKeys = 2,
  kStreamValues = 3,
  kStreamQueries = 4,
  kStreamHeadShape = 5,
  kStreamNoiseMask = 6,
  kStreamNoiseValues = 7,
};

}  // namespace dgq::sim::synth

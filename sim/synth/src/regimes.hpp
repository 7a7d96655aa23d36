#pragma once
// Variance regimes along the sequence, per prompt kind: what segmentation should find.
#include <cstdint>
#include <string>
#include <vector>

namespace dgq::sim::synth {

struct Regime {
  std::string name;
  std::int64_t begin = 0, end = 0;  // half-open token range
  double key_scale = 1.0;           // multiplies the keys' spread; values get its square root
  double drift = 0.0;               // amplitude of a slow sinusoidal drift of the scale (prose)
  std::int64_t period = 0;          // tokens per repeating unit (poetry lines), 0 = none
};

// The regimes of a kind for L tokens; deterministic in seed. Covers [0, L) without gaps.
std::vector<Regime> make_regimes(const std::string& kind, std::int64_t tokens, std::uint64_t seed);

// The key scale of token t inside its regime (drift and verse pattern applied).
double regime_scale_at(const Regime& r, std::int64_t t);

// "header [0,164) x0.55; parameters [164,450) x1.60; ..." for /text.
std::string describe_regimes(const std::vector<Regime>& regimes);

}  // namespace dgq::sim::synth

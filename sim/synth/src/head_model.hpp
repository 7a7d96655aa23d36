#pragma once
// The statistical model of one (layer, KV head): what stays fixed over the tokens.
#include <cstdint>
#include <vector>

#include "dgq/sim/synth/synth.hpp"

namespace dgq::sim::synth {

struct HeadModel {
  std::vector<double> channel_mean;    // per-channel offset of the keys (pre-RoPE)
  std::vector<double> channel_spread;  // per-channel standard deviation of the keys
  std::vector<double> outlier_value;   // per channel: signed outlier magnitude, 0 if none
  std::vector<double> sink_direction;  // unit vector, zero on outlier channels
  double key_gain = 1.0;
  double value_gain = 1.0;
};

// Outlier channels sit in the first half's low-frequency end (rotate-half RoPE pairs i and
// i + D/2 with frequency theta^(-2i/D)), where RoPE barely rotates them: they persist.
HeadModel make_head_model(const SynthOptions& options, int layer, int head);

// RoPE, rotate-half convention (llama): pairs (i, i + D/2), angle = pos * theta^(-2i/D).
std::vector<double> rope_inverse_frequencies(int head_dim, double theta);
void apply_rope(double* x, int head_dim, std::int64_t pos, const std::vector<double>& inverse_frequencies);

}  // namespace dgq::sim::synth

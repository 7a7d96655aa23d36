#pragma once
// DGQ v3 rule W2: per-channel scales learned causally from a calibration prefix. A channel's
// scale is the RMS of its values over the first `calib` tokens (a key's RoPE pair (d, d + D/2)
// shares one: the pair's squared norm does not change under RoPE), floored at 1/64 of the
// largest, so that a channel quiet in the prefix cannot be amplified more than 64x later.
#include <cstdint>
#include <vector>

namespace dgq::schemes::dgq3 {

// Scales s[0 .. channels) from rows [0, calib) of x (fp32, row-major, at least calib rows).
// pair_halves: channels d and d + channels/2 share their mean square (channels even).
// power: the scale is rms^power (1 equalises the channels; -1 stretches the strong ones).
std::vector<float> channel_scales(const float* x, std::int64_t calib, std::int64_t channels, bool pair_halves,
                                  double power);

}  // namespace dgq::schemes::dgq3

#pragma once
// DGQ v3 rules W4 and W5 element by element: the reference's entries of the kernel table
// (dgq/kernels/cpu_kernels.hpp: signed_extreme, symmetric_codes, symmetric_values,
// window_mean), which cpu/ computes eight lanes at a time with the same bits.
#include <cstdint>

namespace dgq::schemes::dgq3 {

// Largest |y[i]| with its sign, the first on ties; +0 when every element is a zero.
float signed_extreme(const float* y, std::int64_t n);

// u[j] = clamp(rint(y[j] * inverse), -2^(b-1), 2^(b-1) - 1) + 2^(b-1).
void symmetric_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);

// y[j] = (u[j] - 2^(b-1)) * d (exact in fp32 for an fp16 d).
void symmetric_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);

// Rule W5's mean of the last min(count, window) rows of the ring, oldest first.
void window_mean(const float* ring, std::int64_t window, std::int64_t count, std::int64_t channels, float* mean);

}  // namespace dgq::schemes::dgq3

#pragma once
// DGQ v3 rule W8 element by element: codes on the Lloyd-Max grids of dgq/dgq3_grids.hpp, the
// reference's entries of the kernel table (grid_codes, grid_values), which cpu/ computes eight
// lanes at a time with the same bits.
#include <cstdint>

namespace dgq::schemes::dgq3 {

// u[j] = the number of grid midpoints strictly below y[j] * inverse (2 <= bits <= 5).
void grid_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u);

// y[j] = grid level u[j] * d (exact in fp32: an integer of at most 7 bits times an fp16 d).
void grid_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y);

}  // namespace dgq::schemes::dgq3

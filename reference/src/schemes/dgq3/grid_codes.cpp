#include "grid_codes.hpp"

#include "dgq/dgq3_grids.hpp"

namespace dgq::schemes::dgq3 {

void grid_codes(const float* y, std::int64_t n, float inverse, int bits, std::uint8_t* u) {
  for (std::int64_t i = 0; i < n; ++i) u[i] = static_cast<std::uint8_t>(rules::grid_code(y[i] * inverse, bits));
}

void grid_values(const std::uint8_t* u, std::int64_t n, int bits, float d, float* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(rules::grid_level(bits, u[i])) * d;
}

}  // namespace dgq::schemes::dgq3

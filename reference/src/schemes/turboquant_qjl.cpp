// TurboQuant_prod's QJL matrix and the deterministic log it needs (dgq/baselines/turboquant.hpp).
#include <cmath>

#include "dgq/baselines/turboquant.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::turboquant {

double deterministic_log(double s) {
  int e = 0;
  double m = std::frexp(s, &e);  // s = m * 2^e, m in [0.5, 1): exact
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --e;
  }
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;
  double p = 1.0 / 41.0;
  for (int k = 19; k >= 0; --k) p = p * t2 + 1.0 / static_cast<double>(2 * k + 1);
  return 2.0 * t * p + static_cast<double>(e) * 0.69314718055994530942;
}

std::uint64_t qjl_stream(std::uint32_t seed, bool key) { return rotation_stream(seed, key) | (1ull << 62); }

std::vector<float> qjl_matrix(int d, std::uint64_t stream) {
  std::vector<float> s(static_cast<std::size_t>(d) * static_cast<std::size_t>(d));
  std::uint64_t state = stream;
  auto uniform = [&] { return 2.0 * static_cast<double>(rules::splitmix64_next(state) >> 11) * 0x1p-53 - 1.0; };
  for (std::size_t i = 0; i < s.size(); i += 2) {
    double u, v, r;
    do {
      u = uniform();
      v = uniform();
      r = u * u + v * v;
    } while (r >= 1.0 || r == 0.0);
    const double f = std::sqrt(-2.0 * deterministic_log(r) / r);
    s[i] = static_cast<float>(u * f);
    if (i + 1 < s.size()) s[i + 1] = static_cast<float>(v * f);
  }
  return s;
}

}  // namespace dgq::turboquant

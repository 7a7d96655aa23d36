#include "dgq/sim/metrics/reconstruction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dgq::sim {

ReconstructionMetrics reconstruction_metrics(const float* x, const float* x_hat, std::int64_t n) {
  ReconstructionMetrics m;
  double err2 = 0.0, ref2 = 0.0, max_err = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double ref = x[i];
    const double e = static_cast<double>(x_hat[i]) - ref;
    err2 += e * e;
    ref2 += ref * ref;
    max_err = std::max(max_err, std::fabs(e));
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  m.mse = n > 0 ? err2 / static_cast<double>(n) : 0.0;
  m.max_abs_err = max_err;
  if (err2 == 0.0) {
    m.snr_db = inf;
    m.rel_fro = 0.0;
  } else {
    m.snr_db = ref2 == 0.0 ? -inf : 10.0 * std::log10(ref2 / err2);
    m.rel_fro = ref2 == 0.0 ? inf : std::sqrt(err2) / std::sqrt(ref2);
  }
  return m;
}

}  // namespace dgq::sim

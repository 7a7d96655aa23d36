#include "dgq/sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

double nearest_rank(std::span<const double> sorted, int percent) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  // Integer ceil(percent * n / 100): a floating product like 0.95 * n can land just above
  // an integer and pick the next rank.
  const std::size_t n = sorted.size();
  std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sorted[rank - 1];
}

Summary summarize(std::span<const double> values) {
  std::vector<double> kept;
  kept.reserve(values.size());
  double sum = 0.0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    kept.push_back(v);
    sum += v;
  }
  Summary s;
  s.count = static_cast<std::int64_t>(kept.size());
  if (kept.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.mean = s.p50 = s.p95 = s.max = nan;
    return s;
  }
  std::sort(kept.begin(), kept.end());
  s.mean = sum / static_cast<double>(kept.size());
  s.p50 = nearest_rank(kept, 50);
  s.p95 = nearest_rank(kept, 95);
  s.max = kept.back();
  return s;
}

}  // namespace dgq::sim

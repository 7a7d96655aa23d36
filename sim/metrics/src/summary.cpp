#include "dgq/sim/metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dgq::sim {

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

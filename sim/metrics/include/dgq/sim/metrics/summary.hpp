#pragma once
// The aggregate statistics of a metric (docs/replay.md, "Aggregates"): what a run's summary
// and the console table report of every metric.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace dgq::sim {

// mean, p50, p95, max of the non-NaN values. Percentiles are nearest-rank: with the n
// values sorted ascending, P_q is the value of rank ceil(q/100 * n) (1-based). The mean sums
// in input order. Every field is NaN when no value is left.
struct Summary {
  double mean = 0, p50 = 0, p95 = 0, max = 0;
  std::int64_t count = 0;  // values used (NaN excluded)
  std::array<double, 4> as_array() const { return {mean, p50, p95, max}; }
};
inline constexpr std::string_view kSummaryFields = "mean,p50,p95,max";

Summary summarize(std::span<const double> values);
// Nearest-rank percentile of ascending-sorted, NaN-free values, percent in [1, 100].
double nearest_rank(std::span<const double> sorted, int percent);

}  // namespace dgq::sim

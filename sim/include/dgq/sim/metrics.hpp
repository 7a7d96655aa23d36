#pragma once
// Reconstruction error of one tensor and the aggregate statistics of a metric
// (docs/replay.md, "Reconstruction metrics" and "Aggregates").
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace dgq::sim {

// x is the original, x_hat the reconstruction, n values each; fp64 sums in index order.
struct ReconstructionMetrics {
  double mse = 0;          // sum (x̂-x)^2 / n; 0 for n = 0
  double snr_db = 0;       // 10 log10(sum x^2 / sum (x̂-x)^2); +inf for an exact copy
  double max_abs_err = 0;  // max |x̂-x|
  double rel_fro = 0;      // ||x̂-x||_F / ||x||_F; 0 when both are 0, +inf when only x is 0
};

ReconstructionMetrics reconstruction_metrics(const float* x, const float* x_hat, std::int64_t n);

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

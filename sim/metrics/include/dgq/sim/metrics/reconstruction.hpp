#pragma once
// Reconstruction error of one tensor (docs/replay.md, "Reconstruction metrics").
#include <cstdint>

namespace dgq::sim {

// x is the original, x_hat the reconstruction, n values each; fp64 sums in index order.
struct ReconstructionMetrics {
  double mse = 0;          // sum (x̂-x)^2 / n; 0 for n = 0
  double snr_db = 0;       // 10 log10(sum x^2 / sum (x̂-x)^2); +inf for an exact copy
  double max_abs_err = 0;  // max |x̂-x|
  double rel_fro = 0;      // ||x̂-x||_F / ||x||_F; 0 when both are 0, +inf when only x is 0
};

ReconstructionMetrics reconstruction_metrics(const float* x, const float* x_hat, std::int64_t n);

}  // namespace dgq::sim

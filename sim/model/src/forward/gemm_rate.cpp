#include "dgq/sim/model/gemm_rate.hpp"

#include <algorithm>
#include <chrono>

#include "dgq/sim/model/gemm_library.hpp"
#include "forward/forward_ops.hpp"

namespace dgq::sim {

double measured_fp32_gemm_gflops(std::int64_t n, int repeats) {
  using forward::RowMat;
  // Fixed, finite values: the rate does not depend on them, and a fixed input keeps the run
  // free of randomness.
  const RowMat a = RowMat::Constant(n, n, 0.5f), b = RowMat::Constant(n, n, 0.25f);
  RowMat c(n, n);
  double best = 0;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    multiply_by_weights(a.data(), n, n, b.data(), n, c.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / seconds);
  }
  return best / 1e9;
}

}  // namespace dgq::sim

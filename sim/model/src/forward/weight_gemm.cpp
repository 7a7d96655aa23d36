#include "dgq/sim/model/weight_gemm.hpp"

#include <Eigen/Dense>
#include <atomic>
#include <cassert>
#include <stdexcept>
#include <string>

#include "dgq/errors.hpp"

#if DGQ_HAVE_ONEDNN
#include <dnnl.h>
#endif

namespace dgq::sim {
namespace {

std::atomic<WeightGemm> g_in_use{default_weight_gemm()};

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void multiply_with_eigen(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                         float* y) {
  Eigen::Map<RowMat>(y, rows, outs).noalias() =
      Eigen::Map<const RowMat>(x, rows, in) * Eigen::Map<const RowMat>(w, outs, in).transpose();
}

#if DGQ_HAVE_ONEDNN
void multiply_with_onednn(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                          float* y) {
  // dnnl_sgemm is row-major: C[M][N] = A[M][K] * op(B), B = W stored [N][K], so op = 'T'.
  const dnnl_status_t status = dnnl_sgemm('N', 'T', rows, outs, in, 1.0f, x, in, w, in, 0.0f, y, outs);
  // Its only failures are invalid arguments, which the callers' shapes rule out.
  if (status != dnnl_success)
    throw std::runtime_error("oneDNN sgemm failed (status " + std::to_string(static_cast<int>(status)) + ") on [" +
                             std::to_string(rows) + "x" + std::to_string(in) + "] x [" + std::to_string(outs) + "x" +
                             std::to_string(in) + "]^T");
}
#endif

}  // namespace

bool onednn_available() { return DGQ_HAVE_ONEDNN != 0; }

WeightGemm default_weight_gemm() { return onednn_available() ? WeightGemm::onednn : WeightGemm::eigen; }

std::string_view weight_gemm_name(WeightGemm g) { return g == WeightGemm::onednn ? "onednn" : "eigen"; }

WeightGemm parse_weight_gemm(std::string_view name, std::string_view option) {
  if (name == "eigen") return WeightGemm::eigen;
  if (name == "onednn") {
    if (!onednn_available())
      throw ParameterError(std::string(option) +
                           " onednn: this dgq was built without oneDNN (install libdnnl-dev and reconfigure)");
    return WeightGemm::onednn;
  }
  throw ParameterError(std::string(option) + " '" + std::string(name) + "': expected onednn or eigen");
}

void use_weight_gemm(WeightGemm g) {
  assert(g == WeightGemm::eigen || onednn_available());
  g_in_use.store(g);
}

WeightGemm weight_gemm_in_use() { return g_in_use.load(); }

void multiply_by_weights(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                         float* y) {
  if (rows == 0 || outs == 0) return;
#if DGQ_HAVE_ONEDNN
  if (weight_gemm_in_use() == WeightGemm::onednn) return multiply_with_onednn(x, rows, in, w, outs, y);
#endif
  multiply_with_eigen(x, rows, in, w, outs, y);
}

}  // namespace dgq::sim

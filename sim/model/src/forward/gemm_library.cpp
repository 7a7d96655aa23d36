#include "dgq/sim/model/gemm_library.hpp"

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

std::atomic<GemmLibrary> g_in_use{default_gemm_library()};

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

GemmLibrary default_gemm_library() { return onednn_available() ? GemmLibrary::onednn : GemmLibrary::eigen; }

std::string_view gemm_library_name(GemmLibrary g) { return g == GemmLibrary::onednn ? "onednn" : "eigen"; }

GemmLibrary parse_gemm_library(std::string_view name, std::string_view option) {
  if (name == "eigen") return GemmLibrary::eigen;
  if (name == "onednn") {
    if (!onednn_available())
      throw ParameterError(std::string(option) +
                           " onednn: this dgq was built without oneDNN (install libdnnl-dev and reconfigure)");
    return GemmLibrary::onednn;
  }
  throw ParameterError(std::string(option) + " '" + std::string(name) + "': expected onednn or eigen");
}

void use_gemm_library(GemmLibrary g) {
  assert(g == GemmLibrary::eigen || onednn_available());
  g_in_use.store(g);
}

GemmLibrary gemm_library_in_use() { return g_in_use.load(); }

void tile_scores(const float* q, std::int64_t rows, std::int64_t d, const float* k, std::int64_t n, float* scores) {
  multiply_by_weights(q, rows, d, k, n, scores);  // the same product: K stored [keys][d] as W is [out][in]
}

void tile_accumulate(const float* p, std::int64_t rows, std::int64_t n, const float* v, std::int64_t d, float* acc) {
  if (rows == 0 || d == 0 || n == 0) return;
#if DGQ_HAVE_ONEDNN
  if (gemm_library_in_use() == GemmLibrary::onednn) {
    const dnnl_status_t status = dnnl_sgemm('N', 'N', rows, d, n, 1.0f, p, n, v, d, 1.0f, acc, d);
    if (status != dnnl_success) throw std::runtime_error("oneDNN sgemm failed on an attention tile");
    return;
  }
#endif
  Eigen::Map<RowMat>(acc, rows, d).noalias() +=
      Eigen::Map<const RowMat>(p, rows, n) * Eigen::Map<const RowMat>(v, n, d);
}

void multiply_by_weights(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                         float* y) {
  if (rows == 0 || outs == 0) return;
#if DGQ_HAVE_ONEDNN
  if (gemm_library_in_use() == GemmLibrary::onednn) return multiply_with_onednn(x, rows, in, w, outs, y);
#endif
  multiply_with_eigen(x, rows, in, w, outs, y);
}

}  // namespace dgq::sim

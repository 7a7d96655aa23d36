#pragma once
// Which library computes the blocked arithmetic's matrix products: the layers' projections and
// the output head (x W^T for a weight stored [out][in]) and attention's tiles (Q K^T and P V of a
// query block against a key tile, attention.cpp). Both compute in fp32;
// they differ in summation order (so in the logits' last bits, and through a quantized cache in
// which side of a rounding boundary a value lands: docs/eval.md) and in speed.
//   onednn  oneDNN's sgemm (Debian's libdnnl, JIT kernels for the CPU it runs on): the default
//           where the build found it. Measured on an AMD EPYC (Zen 3, AVX2, 2 cores), it runs
//           the layers' shapes at 1.5-1.9x Eigen's rate and attention's tiles at 1.3-1.6x
//           (one thread; docs/benchmarks.md). Called inside a parallel region (attention's
//           tiles), it runs on the calling thread.
//   eigen   Eigen's product, what every figure before it was computed with; kept so an earlier
//           figure can be reproduced and the two compared in one run.
// The choice is process-wide, like OpenMP's thread count: a run sets it once (EvalOptions,
// PasskeyOptions) and its results record it. The row-exact arithmetic uses neither.
#include <cstdint>
#include <string>
#include <string_view>

namespace dgq::sim {

enum class GemmLibrary : std::uint8_t { onednn, eigen };

bool onednn_available();             // built with oneDNN
GemmLibrary default_gemm_library();  // onednn where available, else eigen
std::string_view gemm_library_name(GemmLibrary g);
// "onednn" | "eigen"; ParameterError naming the option otherwise, or when onednn is asked of a
// build without it.
GemmLibrary parse_gemm_library(std::string_view name, std::string_view option);

void use_gemm_library(GemmLibrary g);
GemmLibrary gemm_library_in_use();

// y[rows][outs] = x[rows][in] * w[outs][in]^T, all row-major fp32, through the library in use.
void multiply_by_weights(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                         float* y);

// Attention's tiles, row-major and contiguous, through the library in use:
// scores[rows][n] = q[rows][d] * k[n][d]^T, and acc[rows][d] += p[rows][n] * v[n][d].
void tile_scores(const float* q, std::int64_t rows, std::int64_t d, const float* k, std::int64_t n, float* scores);
void tile_accumulate(const float* p, std::int64_t rows, std::int64_t n, const float* v, std::int64_t d, float* acc);

}  // namespace dgq::sim

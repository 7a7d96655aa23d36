#pragma once
// Which library multiplies activations by the weights in the blocked arithmetic: the layers'
// projections and the output head, x W^T for a weight stored [out][in]. Both compute in fp32;
// they differ in summation order (so in the logits' last bits, and through a quantized cache in
// which side of a rounding boundary a value lands: docs/eval.md) and in speed.
//   onednn  oneDNN's sgemm (Debian's libdnnl, JIT kernels for the CPU it runs on): the default
//           where the build found it. Measured on an AMD EPYC (Zen 3, AVX2, 2 cores), it runs
//           the forward pass's shapes at 1.5-1.9x Eigen's rate (docs/benchmarks.md).
//   eigen   Eigen's product, what every figure before it was computed with; kept so an earlier
//           figure can be reproduced and the two compared in one run.
// The choice is process-wide, like OpenMP's thread count: a run sets it once (EvalOptions,
// PasskeyOptions) and its results record it. The row-exact arithmetic uses neither.
#include <cstdint>
#include <string>
#include <string_view>

namespace dgq::sim {

enum class WeightGemm : std::uint8_t { onednn, eigen };

bool onednn_available();           // built with oneDNN
WeightGemm default_weight_gemm();  // onednn where available, else eigen
std::string_view weight_gemm_name(WeightGemm g);
// "onednn" | "eigen"; ParameterError naming the option otherwise, or when onednn is asked of a
// build without it.
WeightGemm parse_weight_gemm(std::string_view name, std::string_view option);

void use_weight_gemm(WeightGemm g);
WeightGemm weight_gemm_in_use();

// y[rows][outs] = x[rows][in] * w[outs][in]^T, all row-major fp32, through the library in use.
void multiply_by_weights(const float* x, std::int64_t rows, std::int64_t in, const float* w, std::int64_t outs,
                         float* y);

}  // namespace dgq::sim

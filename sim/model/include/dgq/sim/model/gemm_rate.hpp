#pragma once
// The machine's GEMM rate through the library the forward pass multiplies with (Eigen, fp32,
// the threads OpenMP has now): the yardstick of `dgq eval --profile`, measured in the same run
// as the pass it judges. A product C = A B^T of [n][n] matrices, as the pass computes x W^T;
// the best of `repeats` (the first warms the caches and the thread pool).
//
// No bf16 rate: Debian 12's Eigen multiplies bfloat16 matrices by widening the elements to
// fp32 for every operation (about a sixth of its fp32 rate on this project's AMD EPYC), so its
// rate would say nothing of the CPU's bf16 instructions; a bf16 path has to bring its own
// kernel, and its rate with it.
#include <cstdint>

namespace dgq::sim {

double measured_fp32_gemm_gflops(std::int64_t n = 1024, int repeats = 5);

}  // namespace dgq::sim

#pragma once
// The machine's GEMM rate through the library the forward pass multiplies its weights with
// (gemm_library.hpp: oneDNN or Eigen, fp32, the threads OpenMP has now): the yardstick of `dgq eval --profile`,
// measured in the same run as the pass it judges. A product C = A B^T of [n][n] matrices, as the pass computes x W^T;
// the best of `repeats` (the first warms the caches and the thread pool).
//
// No bf16 rate: Debian 12's Eigen multiplies bfloat16 matrices by widening the elements to
// fp32 for every operation (about a sixth of its fp32 rate on an AMD EPYC with AVX512-BF16), so
// its rate says nothing of the CPU's bf16 instructions; and oneDNN 2.6 refuses a bf16 matmul
// on a CPU without them (the Zen 3 EPYC this project also runs on: AVX2 only). Where the CPU has
// them, a bf16 path would bring its own kernel, and its rate with it.
#include <cstdint>

namespace dgq::sim {

double measured_fp32_gemm_gflops(std::int64_t n = 1024, int repeats = 5);

}  // namespace dgq::sim

// Entry point of the differential suite. Without a usable CUDA device the suite cannot say
// anything, so it says why and exits 77 (ctest: skipped, not passed) -- unless
// DGQ_GPU_REQUIRED=1 (a run on a machine meant to have a GPU, tools/gpu-check.sh), where a
// missing device is a failure: a skip there would let the differential suite vanish unnoticed. The seed logic is the
// shared one (tests/support/test_seed.cpp): printed, overridable with DGQ_TEST_SEED; Catch2's
// runner is the shared one too (tests/support/catch_session.cpp).
#include <cstdlib>
#include <iostream>
#include <string>

#include "catch_session.hpp"
#include "dgq/cuda/dgq_cuda.hpp"

int main(int argc, char* argv[]) {
  constexpr int kCtestSkip = 77;
  std::string why;
  if (!dgq::cuda::device_available(&why)) {
    const char* required = std::getenv("DGQ_GPU_REQUIRED");
    if (required != nullptr && std::string(required) == "1") {
      std::cout << "FAIL: DGQ_GPU_REQUIRED=1 and no CUDA device: " << why << "\n";
      return EXIT_FAILURE;
    }
    std::cout << "SKIP: no CUDA device: " << why << "\n";
    return kCtestSkip;
  }
  return dgq::test::run_catch_session(argc, argv, "dgq gpu tests");
}

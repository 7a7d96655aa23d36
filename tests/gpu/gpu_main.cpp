// Entry point of the differential suite. Without a usable CUDA device the suite cannot say
// anything, so it says why and exits 77 (ctest: skipped, not passed). The seed logic is the
// shared one (tests/support/test_seed.cpp): printed, overridable with DGQ_TEST_SEED; Catch2's
// runner is the shared one too (tests/support/catch_session.cpp).
#include <iostream>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"
#include "catch_session.hpp"

int main(int argc, char* argv[]) {
  constexpr int kCtestSkip = 77;
  std::string why;
  if (!dgq::cuda::device_available(&why)) {
    std::cout << "SKIP: no CUDA device: " << why << "\n";
    return kCtestSkip;
  }
  return dgq::test::run_catch_session(argc, argv, "dgq gpu tests");
}

// Entry point of the differential suite. Without a usable CUDA device the suite cannot say
// anything, so it says why and exits 77 (ctest: skipped, not passed). The seed logic is the
// shared one (tests/support/test_seed.cpp): printed, overridable with DGQ_TEST_SEED.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"
#include "test_seed.hpp"

int main(int argc, char* argv[]) {
  constexpr int kCtestSkip = 77;
  std::string why;
  if (!dgq::cuda::device_available(&why)) {
    std::cout << "SKIP: no CUDA device: " << why << "\n";
    return kCtestSkip;
  }
  std::cerr << "dgq gpu tests: seed " << dgq::test::seed() << " (override with DGQ_TEST_SEED)\n";
  return Catch::Session().run(argc, argv);
}

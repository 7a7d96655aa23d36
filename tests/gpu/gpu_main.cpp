// Entry point of the differential suite. Without a usable CUDA device the suite cannot say
// anything, so it says why and exits 77 (ctest: skipped, not passed). The seed logic is the
// shared catch_main's: printed, overridable with DGQ_TEST_SEED.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"
#include "test_seed.hpp"

namespace dgq::test {
std::uint64_t seed() {
  static const std::uint64_t value = [] {
    const char* env = std::getenv("DGQ_TEST_SEED");
    return env ? std::strtoull(env, nullptr, 10) : std::uint64_t{20261130};
  }();
  return value;
}
}  // namespace dgq::test

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

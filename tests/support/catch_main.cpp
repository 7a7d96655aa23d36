// Catch2 entry point shared by every test binary. The random seed of the property tests is
// printed and can be overridden: DGQ_TEST_SEED=1234 ./test_reference
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

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
  std::cerr << "dgq tests: seed " << dgq::test::seed() << " (override with DGQ_TEST_SEED)\n";
  return Catch::Session().run(argc, argv);
}

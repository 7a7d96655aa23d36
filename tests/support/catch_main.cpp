// Catch2 entry point shared by every test binary. The random seed of the property tests is
// printed and can be overridden: DGQ_TEST_SEED=1234 ./test_reference
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "test_seed.hpp"

int main(int argc, char* argv[]) {
  std::cerr << "dgq tests: seed " << dgq::test::seed() << " (override with DGQ_TEST_SEED)\n";
  return Catch::Session().run(argc, argv);
}

// Catch2's implementation and session runner; the random seed of the property tests is printed
// and can be overridden: DGQ_TEST_SEED=1234 ./test_reference
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "catch_session.hpp"
#include "test_seed.hpp"

namespace dgq::test {
int run_catch_session(int argc, char* argv[], const char* banner) {
  std::cerr << banner << ": seed " << seed() << " (override with DGQ_TEST_SEED)\n";
  return Catch::Session().run(argc, argv);
}
}  // namespace dgq::test

#include "test_seed.hpp"

#include <cstdlib>

namespace dgq::test {
std::uint64_t seed() {
  static const std::uint64_t value = [] {
    const char* env = std::getenv("DGQ_TEST_SEED");
    return env ? std::strtoull(env, nullptr, 10) : std::uint64_t{20261130};
  }();
  return value;
}
}  // namespace dgq::test

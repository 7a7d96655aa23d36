#pragma once
#include <cstdint>

namespace dgq::test {
// Base seed of all randomized tests; printed at start-up, overridable with DGQ_TEST_SEED.
std::uint64_t seed();
}  // namespace dgq::test

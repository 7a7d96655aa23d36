// The blocked attention's exponential (dgq/attention_rules.hpp, prefill_softmax_exp, and its
// 8-lane twin in sim/model/src/forward/softmax_exp.hpp): its accuracy against
// libm's exp in double, its edge cases, and that the AVX2 lanes give the scalar twin's bits.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dgq/attention_rules.hpp"
#include "forward/softmax_exp.hpp"

using dgq::attention_rules::prefill_softmax_exp;

namespace {
// Distance in units in the last place between two positive normal floats.
std::int64_t exp_ulp_distance(float a, float b) {
  return std::abs(static_cast<std::int64_t>(std::bit_cast<std::int32_t>(a)) - std::bit_cast<std::int32_t>(b));
}
// Arguments spread over the whole domain the softmax uses, [-87, 0].
std::vector<float> exp_domain_grid() {
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i) x.push_back(-87.0f * static_cast<float>(i) / 200000.0f);
  for (int i = 1; i <= 100000; ++i) x.push_back(-1e-3f * static_cast<float>(i) / 100000.0f);  // near 0
  return x;
}
}  // namespace

TEST_CASE("prefill_softmax_exp: edges of its domain") {
  CHECK(prefill_softmax_exp(0.0f) == 1.0f);
  CHECK(prefill_softmax_exp(-0.0f) == 1.0f);
  CHECK(prefill_softmax_exp(2.0f) == 1.0f);  // clamped: only scores minus their maximum are passed
  CHECK(prefill_softmax_exp(-87.5f) == 0.0f);
  CHECK(prefill_softmax_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(prefill_softmax_exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(prefill_softmax_exp(-87.0f) > 0.0f);
  CHECK(std::isnormal(prefill_softmax_exp(-87.0f)));
}

TEST_CASE("prefill_softmax_exp: within 2 ulp of exp on [-87, 0]") {
  std::int64_t worst = 0;
  for (const float x : exp_domain_grid()) {
    const float exact = static_cast<float>(std::exp(static_cast<double>(x)));
    worst = std::max(worst, exp_ulp_distance(prefill_softmax_exp(x), exact));
  }
  INFO("worst distance " << worst << " ulp");
  CHECK(worst <= 2);
}

#if defined(__AVX2__)
TEST_CASE("prefill_softmax_exp8: every lane equals the scalar function bit for bit") {
  std::vector<float> x = exp_domain_grid();
  x.insert(x.end(), {0.0f, 3.0f, -87.0f, -87.01f, -1e30f, -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN()});
  while (x.size() % 8 != 0) x.push_back(-1.0f);
  for (std::size_t i = 0; i < x.size(); i += 8) {
    float lanes[8];
    _mm256_storeu_ps(lanes, dgq::sim::forward::prefill_softmax_exp8(_mm256_loadu_ps(x.data() + i)));
    for (std::size_t l = 0; l < 8; ++l) {
      const float scalar = prefill_softmax_exp(x[i + l]);
      INFO("x = " << x[i + l]);
      CHECK(std::bit_cast<std::uint32_t>(lanes[l]) == std::bit_cast<std::uint32_t>(scalar));
    }
  }
}
#endif

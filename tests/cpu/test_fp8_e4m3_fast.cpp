// fp8-e4m3's code run in cpu/'s table (e4m3_codes) against the per-element rules of
// dgq/baselines/fp8_e4m3.hpp: codes of x / scale for fp32 bit patterns across every binade
// (every e4m3 rounding boundary and its neighbours, subnormals, 448 and above, inf, NaN),
// random values and scales, for every run length 1..300 (vector bodies plus scalar tails).
#include "test_scheme_support.hpp"

#include <cmath>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/cpu/kernels.hpp"

namespace dgq::test::fp8_fast {
namespace {

const kernels::CpuKernels& cpu_table() { return cpu::fast_kernels(); }

std::vector<std::uint8_t> plain_codes(const std::vector<float>& x, float scale) {
  std::vector<std::uint8_t> q(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) q[j] = fp8::float_to_e4m3(x[j] / scale);
  return q;
}

// Every e4m3 value, the midpoints between neighbours (the ties) and one fp32 ulp either side,
// both signs; the fp32 values around 448, 464 (the first that would round to NaN's slot), 2^-6
// and 2^-9, zeros, inf, NaN.
std::vector<float> e4m3_boundaries() {
  std::vector<float> v;
  auto add_around = [&v](float x) {
    for (const float s : {1.0f, -1.0f}) {
      v.push_back(s * x);
      v.push_back(s * std::nextafter(x, 0.0f));
      v.push_back(s * std::nextafter(x, INFINITY));
    }
  };
  for (int c = 0; c < 0x7e; ++c) {
    const float a = fp8::e4m3_to_float(static_cast<std::uint8_t>(c));
    const float b = fp8::e4m3_to_float(static_cast<std::uint8_t>(c + 1));
    add_around(a);
    add_around(a + (b - a) / 2.0f);  // exact: a and b are close binary numbers
  }
  for (const float x : {448.0f, 456.0f, 464.0f, 480.0f, 1e30f, 3.4e38f, 0.015625f, 0.001953125f, 0.0009765625f, 1e-45f,
                        1.17549435e-38f})
    add_around(x);
  v.push_back(0.0f);
  v.push_back(-0.0f);
  v.push_back(INFINITY);
  v.push_back(-INFINITY);
  v.push_back(NAN);
  v.push_back(-NAN);
  return v;
}

}  // namespace

TEST_CASE("e4m3_codes equals float_to_e4m3 of x / scale per element", "[scheme][fast][fp8]") {
  const std::vector<float> boundaries = e4m3_boundaries();
  for (const float scale : {1.0f, -1.0f, 0.5f, 3.0f, 1.0f / 448.0f, 7.3e-3f, 1e-40f, 2.5e37f}) {
    CAPTURE(scale);
    std::vector<std::uint8_t> got(boundaries.size());
    cpu_table().e4m3_codes(boundaries.data(), static_cast<std::int64_t>(boundaries.size()), scale, got.data());
    REQUIRE(got == plain_codes(boundaries, scale));
  }
  // fp32 bit patterns with a stride through the whole positive and negative range.
  std::vector<float> patterns;
  for (std::uint64_t b = 0; b <= 0xffffffffu; b += 65521)
    patterns.push_back(rules::bits_float(static_cast<std::uint32_t>(b)));
  std::vector<std::uint8_t> got(patterns.size());
  cpu_table().e4m3_codes(patterns.data(), static_cast<std::int64_t>(patterns.size()), 1.0f, got.data());
  REQUIRE(got == plain_codes(patterns, 1.0f));
  // Runs of every length 1..300 (tails), random values and scales; the reference table agrees too.
  auto gen = rng(1414);
  for (std::int64_t n = 1; n <= 300; ++n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& e : v) {
      e = gen() % 3 == 0 ? boundaries[gen() % boundaries.size()]
                         : std::uniform_real_distribution<float>(-600.0f, 600.0f)(gen);
    }
    const float scale = std::uniform_real_distribution<float>(0.01f, 3.0f)(gen);
    CAPTURE(n, scale);
    std::vector<std::uint8_t> fast(v.size()), reference(v.size());
    cpu_table().e4m3_codes(v.data(), n, scale, fast.data());
    kernels::reference_kernels().e4m3_codes(v.data(), n, scale, reference.data());
    const std::vector<std::uint8_t> plain = plain_codes(v, scale);
    REQUIRE(fast == plain);
    REQUIRE(reference == plain);
  }
}

}  // namespace dgq::test::fp8_fast

// Rule 1: the canonical sums and token variances, against hand-computed values, and the
// vectorised row kernels against the scalar oracle (identical bits).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "dgq/dgq.hpp"
#include "dgq/element_rules.hpp"
#include "kernel_pairs.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

using dgq::rules::float_bits;

TEST_CASE("canonical_sum: n < 32 folds by the tree (a + c) + b, not left to right", "[dgq][rule1]") {
  // acc = [a, b, c, 0...]; s=16,8,4 add zeros; s=2: acc0 = a + c; s=1: (a + c) + b.
  const float x[3] = {0x1p24f, 1.0f, -0x1p24f};
  REQUIRE(dgq::canonical_sum(x, 3) == 1.0f);
  REQUIRE((x[0] + x[1]) + x[2] == 0.0f);  // the naive order loses the 1
}

TEST_CASE("canonical_sum: element d goes to accumulator d mod 32", "[dgq][rule1]") {
  // x[0] and x[32] share accumulator 0 and cancel before x[1] (accumulator 1) is added.
  float x[33] = {};
  x[0] = 0x1p24f;
  x[1] = 1.0f;
  x[32] = -0x1p24f;
  REQUIRE(dgq::canonical_sum(x, 33) == 1.0f);
  float naive = 0.0f;
  for (float v : x) naive += v;
  REQUIRE(naive == 0.0f);
}

TEST_CASE("canonical_sum: empty and single rows; a -0.0 row sums to +0.0", "[dgq][rule1]") {
  REQUIRE(float_bits(dgq::canonical_sum(nullptr, 0)) == 0u);
  const float one = -2.5f;
  REQUIRE(dgq::canonical_sum(&one, 1) == -2.5f);
  const float negative_zeros[40] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f,
                                    -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f,
                                    -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f,
                                    -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
  REQUIRE(float_bits(dgq::canonical_sum(negative_zeros, 40)) == 0u);  // accumulators start at +0
}

TEST_CASE("canonical_sum_of_squares: accumulates with fma(delta, delta, acc)", "[dgq][rule1]") {
  // Lane 0 gets delta = 1, then delta = 1 + 3*2^-13. In units u = 2^-23:
  // fma: 1 + (1 + 6144u + 1.125u) = 2 + 6145.125u -> 2 + 6146u (ulp 2u at 2).
  // rounded square first: 1 + 6145u, then 2 + 6145u is a tie -> 2 + 6144u.
  float x[33] = {};
  x[0] = 1.0f;
  x[32] = 1.0f + 3 * 0x1p-13f;
  REQUIRE(dgq::canonical_sum_of_squares(x, 33, 0.0f) == 2.0f + 6146 * 0x1p-23f);
  const float square = x[32] * x[32];
  REQUIRE(1.0f + square == 2.0f + 6144 * 0x1p-23f);
}

TEST_CASE("token variance: hand-computed var and the min_var floor", "[dgq][rule1]") {
  // Row [1,2,3,4]: S = (1+3) + (2+4) = 10, mean 2.5, deltas +-1.5, +-0.5: S2 = 5, var = 1.25.
  const float x[8] = {1, 2, 3, 4, 7, 7, 7, 7};
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  p.win = 1;
  auto a = dgq::dgq_analyze(x, 2, 4, p);
  REQUIRE(a.token_var == std::vector<float>{1.25f, 0.0f});
  p.min_var = 2.0f;
  a = dgq::dgq_analyze(x, 2, 4, p);
  REQUIRE(a.token_var == std::vector<float>{2.0f, 2.0f});
}

TEST_CASE("token variance: a row whose statistics overflow fp32 is rejected, naming the token", "[dgq][rule1]") {
  const float x[4] = {1, 2, 3e38f, 3e38f};  // token 1: S = 6e38 overflows
  dgq::DgqV1Params p;
  REQUIRE_THROWS_AS(dgq::dgq_analyze(x, 2, 2, p), dgq::InputError);
  REQUIRE_THROWS_WITH(dgq::dgq_analyze(x, 2, 2, p), Catch::Contains("token 1"));
}

namespace {

// Rows with every kind of value the kernels must treat alike: random, zeros of both signs,
// fp16 extremes and subnormals, fp32 denormals.
std::vector<float> adversarial_row(std::int64_t n, std::uint64_t seed, dgq::DType dt) {
  dgq::test::SplitMix64 rng(seed);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (auto& v : row) {
    switch (rng.next() % 8) {
      case 0: v = -0.0f; break;
      case 1: v = dt == dgq::DType::f32 ? 1e-41f : 0x1p-24f; break;
      case 2: v = dt == dgq::DType::f16 ? 65504.0f : 1e30f; break;
      case 3: v = dt == dgq::DType::f16 ? -65504.0f : -1e30f; break;
      default: v = rng.symmetric(100.0f);
    }
  }
  return row;
}

}  // namespace

TEST_CASE("row kernels: the fast path gives the scalar oracle's bits for every row length", "[dgq][rule1][rule7]") {
  using namespace dgq::kernels;
  INFO("fast path vectorised: " << fast_is_vectorized());
  for (auto dt : {dgq::DType::f16, dgq::DType::bf16, dgq::DType::f32}) {
    for (std::int64_t n = 1; n <= 300; n += (n < 70 ? 1 : 37)) {
      CAPTURE(dgq::dtype_name(dt), n);
      const std::vector<float> values = adversarial_row(n, dgq::test::seed() + n, dt);
      dgq::test::OwnedTensor src(dt, 1, n);
      dgq::from_float(values.data(), src.mut());

      for (auto shape : {RangeShape::per_channel, RangeShape::whole_row}) {
        std::vector<float> row_s(n), row_f(n), lo_s(n, INFINITY), lo_f(n, INFINITY), hi_s(n, -INFINITY),
            hi_f(n, -INFINITY);
        const RowStats s = scalar::scan_row(src.bytes.data(), dt, n, row_s.data(), lo_s.data(), hi_s.data(), shape);
        const RowStats f = fast::scan_row(src.bytes.data(), dt, n, row_f.data(), lo_f.data(), hi_f.data(), shape);
        REQUIRE(s.finite == f.finite);
        REQUIRE(float_bits(s.sum) == float_bits(f.sum));
        REQUIRE(float_bits(s.sum_squares) == float_bits(f.sum_squares));
        REQUIRE(std::memcmp(row_s.data(), row_f.data(), 4 * n) == 0);
        REQUIRE(lo_s == lo_f);  // == : the sign of a zero extreme is fixed later (rule 6)
        REQUIRE(hi_s == hi_f);
      }
      std::vector<float> row_s(n);
      scalar::load_row(src.bytes.data(), dt, n, row_s.data());
      // Per-channel ranges, some flat, some narrow, some wide.
      std::vector<float> lo(n), inv(n), scale(n);
      dgq::test::SplitMix64 rng(n);
      for (std::int64_t d = 0; d < n; ++d) {
        const float a = row_s[d] - rng.unit() * 3.0f, b = row_s[d] + (d % 5 == 0 ? 0.0f : rng.unit() * 50.0f);
        lo[d] = a;
        inv[d] = dgq::rules::code_inverse_step(a, b);
        scale[d] = dgq::rules::dequant_scale(a, b);
      }
      std::vector<std::int8_t> codes_s(n), codes_f(n);
      scalar::quantize_row(src.bytes.data(), dt, n, lo.data(), inv.data(), codes_s.data());
      fast::quantize_row(src.bytes.data(), dt, n, lo.data(), inv.data(), codes_f.data());
      REQUIRE(codes_s == codes_f);

      dgq::test::OwnedTensor out_s(dt, 1, n), out_f(dt, 1, n);
      scalar::dequantize_row(codes_s.data(), n, lo.data(), scale.data(), dt, out_s.bytes.data());
      fast::dequantize_row(codes_s.data(), n, lo.data(), scale.data(), dt, out_f.bytes.data());
      REQUIRE(out_s.bytes == out_f.bytes);
    }
  }
}

TEST_CASE("row kernels: a NaN or Inf anywhere in the row is reported by both paths", "[dgq][rule0]") {
  using namespace dgq::kernels;
  for (std::int64_t n : {1, 7, 8, 9, 33, 128}) {
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
        std::vector<float> x(n, 1.0f), row(n), lo(n, INFINITY), hi(n, -INFINITY);
        x[at] = bad;
        CAPTURE(n, bad, at);
        for (auto shape : {RangeShape::per_channel, RangeShape::whole_row}) {
          REQUIRE_FALSE(scalar::scan_row(x.data(), dgq::DType::f32, n, row.data(), lo.data(), hi.data(), shape).finite);
          REQUIRE_FALSE(fast::scan_row(x.data(), dgq::DType::f32, n, row.data(), lo.data(), hi.data(), shape).finite);
        }
      }
    }
  }
}

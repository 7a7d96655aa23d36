// Rules 6-7: segment ranges, codes, and the error bound of docs/spec.md on every element.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

using dgq::test::OwnedTensor;

namespace {

// docs/spec.md rule 7, the error bound. With M = max(|lo|, |hi|) and the stored scale:
//   fp32 result, hi - lo >= 2^-100: |x - x32| <= scale (1/2 + 1600 2^-24) + 2^-23 (M + scale) + 2^-149
//   narrower ranges:                 |x - x32| <= (hi - lo) + 2^-140
//   rounded to fp16 / bf16: add rho (M + scale) + sigma, rho = 2^-11 / 2^-8, sigma = 2^-25 / 2^-134.
double error_bound(float lo, float hi, dgq::DType dt) {
  const double scale = dgq::rules::dequant_scale(lo, hi);
  const double M = std::max(std::fabs(static_cast<double>(lo)), std::fabs(static_cast<double>(hi)));
  const double w = static_cast<double>(hi) - static_cast<double>(lo);
  double e = w >= 0x1p-100 ? scale * (0.5 + 1600 * 0x1p-24) + 0x1p-23 * (M + scale) + 0x1p-149 : w + 0x1p-140;
  if (dt == dgq::DType::f16) e += 0x1p-11 * (M + scale) + 0x1p-25;
  if (dt == dgq::DType::bf16) e += 0x1p-8 * (M + scale) + 0x1p-134;
  return e;
}

// Checks every element (except in-band marker positions) against the bound; returns the
// largest error measured in units of the segment's scale.
double check_bound(const OwnedTensor& x, const dgq::DgqV1Encoded& enc) {
  dgq::test::OwnedTensor y(x.dtype, x.tokens, x.channels);
  dgq::dgq_decode(enc, y.mut());
  const auto edges = dgq::dgq_segment_edges(enc);
  const bool per_channel = enc.params.granularity == dgq::Granularity::segment_channel;
  double worst = 0.0;
  for (int s = 0; s < enc.segments; ++s) {
    for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t) {
      for (std::int64_t d = 0; d < x.channels; ++d) {
        if (enc.params.markers == dgq::Markers::inband && s > 0 && t == edges[s] && d == 0) continue;
        const std::size_t r = static_cast<std::size_t>(per_channel ? s * x.channels + d : s);
        const double err = std::fabs(static_cast<double>(x.get(t, d)) - static_cast<double>(y.get(t, d)));
        const double bound = error_bound(enc.lo[r], enc.hi[r], x.dtype);
        if (!(err <= bound)) {
          CAPTURE(t, d, x.get(t, d), y.get(t, d), enc.lo[r], enc.hi[r], err, bound);
          FAIL("error bound violated");
        }
        const double scale = dgq::rules::dequant_scale(enc.lo[r], enc.hi[r]);
        if (scale > 0) worst = std::max(worst, err / scale);
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("codes: a hand-computed row (lo = 0, hi = 253, inv = 1)", "[dgq][rule7]") {
  const float x[6] = {0.0f, 253.0f, 1.5f, 2.5f, 126.5f, 100.25f};
  const auto enc = dgq::dgq_encode(dgq::ConstTensor{x, dgq::DType::f32, 1, 6}, dgq::DgqV1Params{});
  REQUIRE(enc.segments == 1);
  REQUIRE(enc.lo == std::vector<float>{0.0f});
  REQUIRE(enc.hi == std::vector<float>{253.0f});
  REQUIRE(enc.codes == std::vector<std::int8_t>{-127, 126, -125, -125, -1, -27});
}

TEST_CASE("ranges: whole-segment min/max, per channel in segment-channel mode", "[dgq][rule6]") {
  const float x[6] = {1.0f, -2.0f, 3.0f,  //
                      4.0f, 0.5f,  -6.0f};
  auto enc = dgq::dgq_encode(dgq::ConstTensor{x, dgq::DType::f32, 2, 3}, dgq::DgqV1Params{});
  REQUIRE(enc.lo == std::vector<float>{-6.0f});
  REQUIRE(enc.hi == std::vector<float>{4.0f});
  enc = dgq::dgq_encode(dgq::ConstTensor{x, dgq::DType::f32, 2, 3},
                        dgq::test::params_with(dgq::Granularity::segment_channel, dgq::Markers::table));
  REQUIRE(enc.lo == std::vector<float>{1.0f, -2.0f, -6.0f});
  REQUIRE(enc.hi == std::vector<float>{4.0f, 0.5f, 3.0f});
}

TEST_CASE("ranges: a -0.0 extreme is stored as +0.0", "[dgq][rule6]") {
  const float x[4] = {-0.0f, 1.0f, 2.0f, 3.0f};
  const float y[4] = {-1.0f, -2.0f, -0.0f, -3.0f};
  REQUIRE(dgq::rules::float_bits(dgq::dgq_encode({x, dgq::DType::f32, 1, 4}, {}).lo[0]) == 0u);
  REQUIRE(dgq::rules::float_bits(dgq::dgq_encode({y, dgq::DType::f32, 1, 4}, {}).hi[0]) == 0u);
}

TEST_CASE("ranges: hi - lo overflowing fp32 is an InputError naming segment (and channel)", "[dgq][rule6]") {
  // One value per row (D = 1): every token's statistics are finite, only the range overflows.
  const float column[3] = {3e38f, -3e38f, 0.0f};
  dgq::DgqV1Params p;
  REQUIRE_THROWS_AS(dgq::dgq_encode({column, dgq::DType::f32, 3, 1}, p), dgq::InputError);
  REQUIRE_THROWS_WITH(dgq::dgq_encode({column, dgq::DType::f32, 3, 1}, p), Catch::Contains("segment 0"));
  p.granularity = dgq::Granularity::segment_channel;
  REQUIRE_THROWS_WITH(dgq::dgq_encode({column, dgq::DType::f32, 3, 1}, p), Catch::Contains("channel 0"));
}

TEST_CASE("codes: constant rows and an all-equal tensor code to -127 and decode exactly", "[dgq][rule7]") {
  for (auto g : {dgq::Granularity::segment, dgq::Granularity::segment_channel}) {
    OwnedTensor x(dgq::DType::f16, 40, 33);
    for (std::int64_t t = 0; t < 40; ++t)
      for (std::int64_t d = 0; d < 33; ++d) x.set(t, d, g == dgq::Granularity::segment ? -3.25f : 0.5f * d);
    const auto enc = dgq::dgq_encode(x.view(), dgq::test::params_with(g, dgq::Markers::table));
    REQUIRE(std::all_of(enc.codes.begin(), enc.codes.end(), [](std::int8_t c) { return c == -127; }));
    OwnedTensor y(dgq::DType::f16, 40, 33);
    dgq::dgq_decode(enc, y.mut());
    REQUIRE(y.bytes == x.bytes);
  }
}

TEST_CASE("codes: never -128 or 127 outside in-band markers", "[dgq][rule7]") {
  const auto x = dgq::test::random_tensor(dgq::DType::f16, 3000, 64, dgq::test::seed());
  const auto enc = dgq::dgq_encode(x.view(), {});
  REQUIRE(std::none_of(enc.codes.begin(), enc.codes.end(), [](std::int8_t c) { return c == -128 || c == 127; }));
  REQUIRE(std::count(enc.codes.begin(), enc.codes.end(), std::int8_t{126}) > 0);
  REQUIRE(std::count(enc.codes.begin(), enc.codes.end(), std::int8_t{-127}) > 0);
}

TEST_CASE("error bound holds on every element of large random tensors, every dtype and mode", "[dgq][rule7][bound]") {
  auto amp = [](std::int64_t t) { return t < 8192 ? 2.0f : (t < 20480 ? 60.0f : 0.3f); };
  for (auto dt : {dgq::DType::f16, dgq::DType::bf16, dgq::DType::f32}) {
    const auto x = dgq::test::random_tensor(dt, 24576, 128, dgq::test::seed() ^ 0xb0b, amp);
    for (auto g : {dgq::Granularity::segment, dgq::Granularity::segment_channel}) {
      for (auto m : {dgq::Markers::table, dgq::Markers::inband}) {
        CAPTURE(dgq::dtype_name(dt), dgq::granularity_name(g), dgq::markers_name(m));
        const auto enc = dgq::dgq_encode(x.view(), dgq::test::params_with(g, m));
        REQUIRE(enc.segments == 3);
        const double worst = check_bound(x, enc);
        // The bound is not vacuous: the half-step error is actually reached.
        REQUIRE(worst > 0.45);
      }
    }
  }
}

TEST_CASE("error bound: fp16 extremes and subnormals; fp32 denormals", "[dgq][rule7][bound]") {
  OwnedTensor h(dgq::DType::f16, 64, 32);
  dgq::test::SplitMix64 rng(dgq::test::seed());
  const float specials[] = {65504.0f, -65504.0f, 0x1p-24f, -0x1p-24f, 0x1.ff8p-15f, 0.0f, -0.0f, 65472.0f};
  for (std::int64_t i = 0; i < 64 * 32; ++i) h.set(i / 32, i % 32, specials[rng.next() % 8]);
  auto enc = dgq::dgq_encode(h.view(), {});
  check_bound(h, enc);
  OwnedTensor y(dgq::DType::f16, 64, 32);
  dgq::dgq_decode(enc, y.mut());
  for (std::int64_t i = 0; i < 64 * 32; ++i) REQUIRE(std::isfinite(y.get(i / 32, i % 32)));  // no overflow to inf
  // Only subnormal halves: a range of a few 2^-24.
  for (std::int64_t i = 0; i < 64 * 32; ++i) h.set(i / 32, i % 32, static_cast<float>(rng.next() % 5) * 0x1p-24f);
  check_bound(h, dgq::dgq_encode(h.view(), {}));

  OwnedTensor f(dgq::DType::f32, 16, 16);
  for (std::int64_t i = 0; i < 256; ++i) f.set(i / 16, i % 16, static_cast<float>(rng.next() % 1000) * 1e-42f);
  for (auto g : {dgq::Granularity::segment, dgq::Granularity::segment_channel})
    check_bound(f, dgq::dgq_encode(f.view(), dgq::test::params_with(g, dgq::Markers::table)));
}

// dgq_encode_into / dgq_encode_batch_into reuse the output's buffers; whatever `out` held
// before, the result must equal a fresh dgq_encode. Also the dgq Scheme, which encodes straight
// into its "codes" part and checks finiteness only when the encoder fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "dgq/dgq.hpp"
#include "dgq/scheme.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace {

dgq::test::OwnedTensor stepped(dgq::DType dt, std::int64_t tokens, std::int64_t channels, std::uint64_t seed) {
  return dgq::test::random_tensor(dt, tokens, channels, seed, [=](std::int64_t t) {
    return t < tokens / 3 ? 1.0f : (t < tokens / 2 ? 8.0f : 2.0f);
  });
}

dgq::DgqV1Params params(dgq::Markers m, dgq::Granularity g) {
  dgq::DgqV1Params p;
  p.markers = m;
  p.granularity = g;
  p.win = 4;
  return p;
}

}  // namespace

TEST_CASE("dgq_encode_into: a reused output equals a fresh encode whatever it held before", "[dgq][encode]") {
  using dgq::Granularity;
  using dgq::Markers;
  // Larger, then smaller, then empty, then larger again; marker modes and granularities change
  // between calls so stale boundaries, bitmap bytes, ranges or in-band marks would show.
  struct Case {
    dgq::DType dt;
    std::int64_t tokens, channels;
    dgq::DgqV1Params p;
  };
  const std::vector<Case> cases = {
      {dgq::DType::f16, 200, 40, params(Markers::inband, Granularity::segment_channel)},
      {dgq::DType::bf16, 90, 33, params(Markers::bitmap, Granularity::segment)},
      {dgq::DType::f32, 0, 16, params(Markers::table, Granularity::segment)},
      {dgq::DType::f16, 64, 128, params(Markers::table, Granularity::segment_channel)},
      {dgq::DType::f32, 300, 7, params(Markers::inband, Granularity::segment)},
  };
  dgq::DgqV1Encoded reused;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const Case& c = cases[i];
    const auto x = stepped(c.dt, c.tokens, c.channels, dgq::test::seed() + i);
    dgq::dgq_encode_into(x.view(), c.p, reused);
    const dgq::DgqV1Encoded fresh = dgq::dgq_encode(x.view(), c.p);
    REQUIRE(fresh.segments >= (c.tokens > 0 ? 2 : 0));  // the steps make segments
    REQUIRE(reused == fresh);
  }
}

TEST_CASE("dgq_encode_batch_into: equals dgq_encode_batch, also into a longer vector of used entries",
          "[dgq][encode]") {
  std::vector<dgq::test::OwnedTensor> owned;
  std::vector<dgq::ConstTensor> units;
  for (int u = 0; u < 5; ++u) owned.push_back(stepped(dgq::DType::f16, 100 + 17 * u, 24, dgq::test::seed() + 31 * u));
  for (const auto& t : owned) units.push_back(t.view());
  const auto p = params(dgq::Markers::inband, dgq::Granularity::segment);
  std::vector<dgq::DgqV1Encoded> out;
  dgq::dgq_encode_batch_into(units, p, out);
  REQUIRE(out == dgq::dgq_encode_batch(units, p));
  std::reverse(units.begin(), units.end());
  units.pop_back();
  dgq::dgq_encode_batch_into(units, p, out);
  REQUIRE(out == dgq::dgq_encode_batch(units, p));
}

TEST_CASE("dgq scheme: a NaN after an overflowing row is reported as the scheme's non-finite error", "[dgq][scheme]") {
  // dgq_encode meets token 0's overflowing variance first; the scheme names the first
  // non-finite element in the schemes' common words, as it did with its own pre-scan.
  dgq::test::OwnedTensor x(dgq::DType::f32, 8, 4);
  for (std::int64_t d = 0; d < 4; ++d) x.set(0, d, 3e38f);
  x.set(5, 2, NAN);
  REQUIRE_THROWS_WITH(dgq::dgq_encode(x.view(), {}), Catch::Contains("token 0"));
  const auto scheme = dgq::make_scheme("dgq");
  REQUIRE_THROWS_AS(scheme->compress(x.view(), dgq::TensorRole::key), dgq::InputError);
  REQUIRE_THROWS_WITH(scheme->compress(x.view(), dgq::TensorRole::key),
                      Catch::Equals("dgq: non-finite value nan at token 5, channel 2"));
}

TEST_CASE("dgq scheme: an overflowing finite tensor keeps dgq_encode's error", "[dgq][scheme]") {
  dgq::test::OwnedTensor x(dgq::DType::f32, 8, 4);
  for (std::int64_t d = 0; d < 4; ++d) x.set(3, d, -3e38f);
  const auto scheme = dgq::make_scheme("dgq");
  REQUIRE_THROWS_WITH(scheme->compress(x.view(), dgq::TensorRole::key), Catch::Contains("token 3 overflows fp32"));
}

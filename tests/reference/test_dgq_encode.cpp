// Encode/decode end to end: edge-case shapes, input errors, markers (rule 8), bytes (rule 9),
// round trips against the independent scalar decoder, and thread-count independence.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

using dgq::test::OwnedTensor;

namespace {

const dgq::Markers kAllMarkers[] = {dgq::Markers::table, dgq::Markers::bitmap, dgq::Markers::inband};
const dgq::Granularity kAllGranularities[] = {dgq::Granularity::segment, dgq::Granularity::segment_channel};

// Amplitude steps at 16-aligned tokens so that longer tensors get several segments.
float stepped(std::int64_t t) { return (t / 512) % 3 == 1 ? 20.0f : 1.0f; }

// dgq_decode's bytes equal the scalar decoder fed with the encoder's own edges.
void require_round_trip(const OwnedTensor& x, const dgq::DgqV1Encoded& enc, const std::vector<std::uint32_t>& edges) {
  REQUIRE(dgq::dgq_segment_edges(enc) == edges);
  OwnedTensor y(x.dtype, x.tokens, x.channels);
  dgq::dgq_decode(enc, y.mut());
  REQUIRE(y.bytes == dgq::test::scalar_decode(enc, edges).bytes);
}

std::vector<std::uint32_t> encoder_edges(const OwnedTensor& x, const dgq::DgqV1Params& p) {
  const auto xf = dgq::to_float(x.view());
  const auto a = dgq::dgq_analyze(xf.data(), x.tokens, x.channels, p);
  std::vector<std::uint32_t> edges{0};
  if (x.tokens == 0) return edges;
  edges.insert(edges.end(), a.edges.begin(), a.edges.end());
  edges.push_back(static_cast<std::uint32_t>(x.tokens));
  return edges;
}

}  // namespace

TEST_CASE("encode: L = 0 stores nothing and decodes to nothing", "[dgq][encode]") {
  for (auto m : kAllMarkers) {
    const auto enc = dgq::dgq_encode(dgq::ConstTensor{nullptr, dgq::DType::f16, 0, 128},
                                     dgq::test::params_with(dgq::Granularity::segment, m));
    REQUIRE(enc.segments == 0);
    REQUIRE(enc.codes.empty());
    REQUIRE(enc.lo.empty());
    REQUIRE(enc.stored_bytes().total() == 0);
    REQUIRE(dgq::dgq_segment_edges(enc) == std::vector<std::uint32_t>{0});
    REQUIRE_NOTHROW(dgq::dgq_decode(enc, dgq::MutTensor{nullptr, dgq::DType::f16, 0, 128}));
  }
}

TEST_CASE("encode: edge-case shapes round-trip in every marker mode and granularity", "[dgq][encode][rule8]") {
  for (std::int64_t L : {1, 15, 16, 17, 31, 32, 33, 2047, 2048}) {
    for (std::int64_t D : {1, 31, 32, 33, 64, 80, 128, 256}) {
      if (L * D > 2048 * 80) continue;  // the biggest shapes are covered below
      const auto x = dgq::test::random_tensor(dgq::DType::f16, L, D, dgq::test::seed() + L * 1000 + D, stepped);
      for (auto g : kAllGranularities) {
        for (auto m : kAllMarkers) {
          CAPTURE(L, D, dgq::granularity_name(g), dgq::markers_name(m));
          const auto p = dgq::test::params_with(g, m);
          const auto enc = dgq::dgq_encode(x.view(), p);
          REQUIRE(enc.codes.size() == static_cast<std::size_t>(L * D));
          require_round_trip(x, enc, encoder_edges(x, p));
        }
      }
    }
  }
}

TEST_CASE("encode: L = 16384 finds the planted segments, identical edges in every marker mode",
          "[dgq][encode][rule8]") {
  const auto x = dgq::test::random_tensor(dgq::DType::f16, 16384, 128, dgq::test::seed(),
                                          [](std::int64_t t) { return t >= 6144 && t < 10240 ? 16.0f : 1.0f; });
  for (auto m : kAllMarkers) {
    const auto p = dgq::test::params_with(dgq::Granularity::segment, m);
    const auto enc = dgq::dgq_encode(x.view(), p);
    REQUIRE(enc.segments == 3);
    require_round_trip(x, enc, {0, 6144, 10240, 16384});
  }
}

TEST_CASE("markers: table holds the interior edges; bitmap holds parity bits LSB first", "[dgq][rule8]") {
  // Planted steps at 16 and 48 (win 16); L = 2050 >= 2048 allows 3 segments.
  const auto x = dgq::test::random_tensor(dgq::DType::f16, 2050, 8, 3,
                                          [](std::int64_t t) { return t >= 16 && t < 48 ? 30.0f : 1.0f; });
  auto p = dgq::test::params_with(dgq::Granularity::segment, dgq::Markers::table);
  const auto table = dgq::dgq_encode(x.view(), p);
  REQUIRE(table.boundaries == std::vector<std::uint32_t>{16, 48});
  REQUIRE(table.stored_bytes().markers == 8);
  p.markers = dgq::Markers::bitmap;
  const auto bitmap = dgq::dgq_encode(x.view(), p);
  REQUIRE(bitmap.bitmap.size() == 257);  // ceil(2050 / 8)
  REQUIRE(bitmap.bitmap[0] == 0x00);
  REQUIRE(bitmap.bitmap[1] == 0x00);
  REQUIRE(bitmap.bitmap[2] == 0xff);    // tokens 16..23: segment 1
  REQUIRE(bitmap.bitmap[5] == 0xff);    // tokens 40..47
  REQUIRE(bitmap.bitmap[6] == 0x00);    // segment 2: parity 0 again
  REQUIRE(bitmap.bitmap[256] == 0x00);  // tokens 2048, 2049; unused high bits 0
  REQUIRE(bitmap.codes == table.codes);
  REQUIRE(bitmap.stored_bytes().markers == 257);
}

TEST_CASE("markers: bitmap's last byte keeps unused high bits at zero when the last segment is odd", "[dgq][rule8]") {
  const auto x =
      dgq::test::random_tensor(dgq::DType::f16, 2045, 4, 9, [](std::int64_t t) { return t >= 1024 ? 30.0f : 1.0f; });
  const auto enc = dgq::dgq_encode(x.view(), dgq::test::params_with(dgq::Granularity::segment, dgq::Markers::bitmap));
  REQUIRE(enc.segments == 2);
  REQUIRE(enc.bitmap.back() == 0x1f);  // tokens 2040..2044 set, bits 5..7 unused
}

TEST_CASE("markers: in-band marks channel 0 of each segment's first token, lossy on that element", "[dgq][rule8]") {
  const auto x = dgq::test::random_tensor(dgq::DType::f32, 2048, 16, 21,
                                          [](std::int64_t t) { return t >= 512 && t < 1024 ? 25.0f : 1.0f; });
  auto p = dgq::test::params_with(dgq::Granularity::segment, dgq::Markers::table);
  const auto table = dgq::dgq_encode(x.view(), p);
  p.markers = dgq::Markers::inband;
  const auto inband = dgq::dgq_encode(x.view(), p);
  REQUIRE(table.boundaries == std::vector<std::uint32_t>{512, 1024});
  for (std::size_t i = 0; i < table.codes.size(); ++i) {
    if (i == 512 * 16 || i == 1024 * 16)
      REQUIRE(inband.codes[i] == dgq::rules::inband_mark(table.codes[i]));
    else
      REQUIRE(inband.codes[i] == table.codes[i]);
  }
  REQUIRE(inband.stored_bytes().markers == 0);
  REQUIRE(dgq::dgq_segment_edges(inband) == std::vector<std::uint32_t>{0, 512, 1024, 2048});
}

TEST_CASE("bytes: codes L*D, ranges 8*segments*C, markers per mode; ratio vs the input", "[dgq][rule9]") {
  const auto x =
      dgq::test::random_tensor(dgq::DType::f16, 2048, 128, 4, [](std::int64_t t) { return t >= 1024 ? 30.0f : 1.0f; });
  const auto seg = dgq::dgq_encode(x.view(), dgq::test::params_with(dgq::Granularity::segment, dgq::Markers::table));
  REQUIRE(seg.segments == 2);
  REQUIRE(seg.stored_bytes().codes == 2048 * 128);
  REQUIRE(seg.stored_bytes().ranges == 16);
  REQUIRE(seg.stored_bytes().markers == 4);
  REQUIRE(seg.stored_bytes().total() == 262164);
  const auto ch =
      dgq::dgq_encode(x.view(), dgq::test::params_with(dgq::Granularity::segment_channel, dgq::Markers::bitmap));
  REQUIRE(ch.stored_bytes().ranges == 8 * 2 * 128);
  REQUIRE(ch.stored_bytes().markers == 256);
  REQUIRE(ch.stored_bytes().total() == 262144 + 2048 + 256);
}

TEST_CASE("input errors: NaN/Inf named by token and channel; bad shapes", "[dgq][rule0]") {
  OwnedTensor x = dgq::test::random_tensor(dgq::DType::f16, 40, 33, 1);
  x.set(37, 5, NAN);
  REQUIRE_THROWS_AS(dgq::dgq_encode(x.view(), {}), dgq::InputError);
  REQUIRE_THROWS_WITH(dgq::dgq_encode(x.view(), {}), Catch::Contains("non-finite value nan at token 37, channel 5"));
  x.set(2, 32, -INFINITY);
  REQUIRE_THROWS_WITH(dgq::dgq_encode(x.view(), {}), Catch::Contains("-inf at token 2, channel 32"));
  float f[2] = {1, 2};
  REQUIRE_THROWS_WITH(dgq::dgq_encode({f, dgq::DType::f32, 2, 0}, {}), Catch::Contains("channels=0"));
  REQUIRE_THROWS_WITH(dgq::dgq_encode({f, dgq::DType::f32, -1, 2}, {}), Catch::Contains("tokens=-1"));
  REQUIRE_THROWS_AS(dgq::dgq_encode({nullptr, dgq::DType::f32, 1, 2}, {}), dgq::InputError);
}

TEST_CASE("decode errors: wrong target shape or corrupt stored parts", "[dgq][rule8]") {
  const auto x = dgq::test::random_tensor(dgq::DType::f16, 64, 8, 2);
  auto enc = dgq::dgq_encode(x.view(), dgq::test::params_with(dgq::Granularity::segment, dgq::Markers::bitmap));
  OwnedTensor wrong(dgq::DType::f32, 64, 8);
  REQUIRE_THROWS_WITH(dgq::dgq_decode(enc, wrong.mut()), Catch::Contains("decode target"));
  enc.bitmap[0] = 1;  // token 0 must have parity 0
  REQUIRE_THROWS_WITH(dgq::dgq_segment_edges(enc), Catch::Contains("token 0"));
  enc.bitmap.pop_back();
  REQUIRE_THROWS_WITH(dgq::dgq_segment_edges(enc), Catch::Contains("bitmap has 7 bytes"));
  auto table = dgq::dgq_encode(x.view(), {});
  table.boundaries = {70};
  REQUIRE_THROWS_WITH(dgq::dgq_segment_edges(table), Catch::Contains("boundary 0 = 70"));
}

TEST_CASE("batch: identical bytes with 1 and 2 OpenMP threads; errors name the unit", "[dgq][batch]") {
  std::vector<OwnedTensor> owned;
  for (int u = 0; u < 6; ++u)
    owned.push_back(dgq::test::random_tensor(dgq::DType::f16, 2048 + 16 * u, 64, dgq::test::seed() + u, stepped));
  std::vector<dgq::ConstTensor> units;
  for (const auto& o : owned) units.push_back(o.view());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = dgq::dgq_encode_batch(units, {});
  omp_set_num_threads(2);
  const auto two = dgq::dgq_encode_batch(units, {});
  for (std::size_t u = 0; u < units.size(); ++u) REQUIRE(one[u] == dgq::dgq_encode(units[u], {}));
  REQUIRE(one == two);
  owned[4].set(3, 1, INFINITY);
  REQUIRE_THROWS_WITH(dgq::dgq_encode_batch(units, {}),
                      Catch::Contains("unit 4: non-finite value inf at token 3, channel 1"));
  omp_set_num_threads(saved);
}

// One spelling for every input check (dgq/non_finite_name.hpp): a stream writes a NaN whose sign
// bit is set as "-nan", and core's check had written -inf as "inf".
TEST_CASE("encode names -inf as -inf and a NaN of either sign as nan", "[dgq][errors]") {
  for (const dgq::DType dtype : {dgq::DType::f32, dgq::DType::f16}) {
    for (const auto& [bad, word] :
         {std::pair{-INFINITY, "-inf"}, std::pair{std::copysign(NAN, -1.0f), "nan"}, std::pair{INFINITY, "inf"}}) {
      CAPTURE(dgq::dtype_name(dtype), word);
      OwnedTensor x = dgq::test::random_tensor(dtype, 64, 32, dgq::test::seed(), stepped);
      x.set(9, 4, bad);
      const std::string expected = std::string("non-finite value ") + word + " at token 9, channel 4";
      REQUIRE_THROWS_WITH(dgq::dgq_encode(x.view(), {}), Catch::Contains(expected));
      REQUIRE_THROWS_WITH(dgq::dgq_encode_batch({x.view()}, {}), Catch::Contains("unit 0: " + expected));
    }
  }
}

// The dgq scheme wraps dgq_encode/dgq_decode: its parts must carry exactly the encoder's
// bytes, decompress must give dgq_decode's output in every marker mode and granularity, and
// planned_bytes is the bound of rule 4's segment budget.
#include "test_scheme_support.hpp"

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

namespace {

const std::vector<std::string> kModes{
    "granularity=segment,markers=table",          "granularity=segment,markers=bitmap",
    "granularity=segment,markers=inband",         "granularity=segment-channel,markers=table",
    "granularity=segment-channel,markers=bitmap", "granularity=segment-channel,markers=inband"};

// Quiet tokens, then loud ones, then quiet again: rule 3 must find the two steps.
OwnedTensor variance_steps(std::int64_t l, std::int64_t d, std::uint64_t stream) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t t = 0; t < l; ++t) {
    const float spread = (t >= l / 3 && t < 2 * l / 3) ? 8.0f : 0.5f;
    for (std::int64_t c = 0; c < d; ++c) v[t * d + c] = spread * normal(gen);
  }
  return tensor_from(v, l, d);
}

std::vector<std::uint8_t> range_bytes(const DgqV1Encoded& enc) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < enc.lo.size(); ++i) {
    for (const float f : {enc.lo[i], enc.hi[i]}) {
      std::uint8_t b[4];
      std::memcpy(b, &f, 4);
      out.insert(out.end(), b, b + 4);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("dgq spec records every parameter and round-trips", "[scheme][dgq][registry]") {
  CHECK(make_scheme("dgq")->spec() ==
        "dgq:win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table");
  const auto s = make_scheme(
      "dgq:markers=bitmap,min_var=0.01,max_groups=8,win=32,group_ratio=0.5,"
      "granularity=segment-channel");
  CHECK(s->spec() == "dgq:win=32,group_ratio=0.5,min_var=0.01,max_groups=8,granularity=segment-channel,markers=bitmap");
  CHECK(make_scheme(s->spec())->spec() == s->spec());
  CHECK(make_scheme("dgq:group_ratio=0.123456789")->spec() ==
        make_scheme(make_scheme("dgq:group_ratio=0.123456789")->spec())->spec());
}

TEST_CASE("dgq rejects bad parameters by name", "[scheme][dgq][errors]") {
  CHECK_THROWS_WITH(make_scheme("dgq:max_groups=9"), Contains("max_groups"));
  CHECK_THROWS_WITH(make_scheme("dgq:max_groups=0"), Contains("max_groups"));
  CHECK_THROWS_WITH(make_scheme("dgq:win=0"), Contains("win"));
  CHECK_THROWS_WITH(make_scheme("dgq:group_ratio=0"), Contains("group_ratio"));
  CHECK_THROWS_WITH(make_scheme("dgq:group_ratio=1.5"), Contains("group_ratio"));
  CHECK_THROWS_WITH(make_scheme("dgq:group_ratio=nan"), Contains("group_ratio"));
  CHECK_THROWS_WITH(make_scheme("dgq:min_var=-1"), Contains("min_var"));
  CHECK_THROWS_WITH(make_scheme("dgq:markers=morse"), Contains("markers"));
  CHECK_THROWS_WITH(make_scheme("dgq:granularity=token"), Contains("granularity"));
  CHECK_THROWS_WITH(make_scheme("dgq:window=16"), Contains("unknown parameter 'window'"));
  CHECK_THROWS_AS(make_scheme("dgq:win=16.5"), ParameterError);
}

TEST_CASE("dgq of an empty tensor has empty parts and plans 0 bytes", "[scheme][dgq][edge]") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    const auto s = make_scheme("dgq:" + mode);
    const OwnedTensor x(DType::f16, 0, 128);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.total_bytes() == 0);
    CHECK(s->planned_bytes(0, 128, DType::f16, TensorRole::key) == 0);
    OwnedTensor out(DType::f16, 0, 128);
    CHECK_NOTHROW(s->decompress(c, out.mut()));
  }
}

TEST_CASE("dgq parts are the encoder's bytes and decompress is dgq_decode", "[scheme][dgq][roundtrip]") {
  for (const std::string& mode : kModes) {
    const auto s = make_scheme("dgq:" + mode);
    const DgqV1Params p = [&] {
      DgqV1Params q;
      q.granularity =
          mode.find("segment-channel") != std::string::npos ? Granularity::segment_channel : Granularity::segment;
      q.markers = mode.find("bitmap") != std::string::npos   ? Markers::bitmap
                  : mode.find("inband") != std::string::npos ? Markers::inband
                                                             : Markers::table;
      return q;
    }();
    for (const std::int64_t l : {1, 15, 16, 17, 33, 300}) {
      for (const std::int64_t d : {1, 31, 64, 128}) {
        CAPTURE(mode, l, d);
        const OwnedTensor x = variance_steps(l, d, static_cast<std::uint64_t>(l * 7 + d));
        const DgqV1Encoded enc = dgq_encode(x.view(), p);
        const Compressed c = s->compress(x.view(), TensorRole::key);
        REQUIRE(c.find("codes") != nullptr);
        CHECK(c.find("codes")->bytes == std::vector<std::uint8_t>(enc.codes.begin(), enc.codes.end()));
        CHECK(c.find("ranges")->bytes == range_bytes(enc));
        CHECK(c.total_bytes() == enc.stored_bytes().total());
        CHECK(c.segment_edges() == dgq_segment_edges(enc));
        CHECK((c.find("boundaries") != nullptr) == (p.markers == Markers::table));
        CHECK((c.find("bitmap") != nullptr) == (p.markers == Markers::bitmap));
        if (p.markers == Markers::bitmap) CHECK(c.find("bitmap")->bytes == enc.bitmap);
        CHECK(c.total_bytes() <= s->planned_bytes(l, d, DType::f16, TensorRole::key));
        OwnedTensor expected(DType::f16, l, d);
        dgq_decode(enc, expected.mut());
        CHECK(decompressed(*s, c).bytes == expected.bytes);
      }
    }
  }
}

TEST_CASE("dgq planned_bytes is reached when the tensor uses its whole segment budget", "[scheme][dgq][bytes]") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    const auto s = make_scheme("dgq:" + mode);
    // L = 3000 has budget 3 (rule 4) and the data has exactly two variance steps.
    const OwnedTensor x = variance_steps(3000, 128, 99);
    const Compressed c = s->compress(x.view(), TensorRole::value);
    REQUIRE(c.segment_edges().size() == 4);
    CHECK(c.total_bytes() == s->planned_bytes(3000, 128, DType::f16, TensorRole::value));
  }
  // A flat tensor uses one segment and stays below the plan.
  const auto s = make_scheme("dgq");
  const OwnedTensor flat(DType::f16, 3000, 128);
  const Compressed c = s->compress(flat.view(), TensorRole::value);
  CHECK(c.segment_edges() == std::vector<std::uint32_t>{0, 3000});
  CHECK(c.total_bytes() == 3000u * 128u + 8u);
  CHECK(s->planned_bytes(3000, 128, DType::f16, TensorRole::value) == 3000u * 128u + 3u * 8u + 2u * 4u);
}

TEST_CASE("dgq rejects NaN naming token and channel", "[scheme][dgq][errors]") {
  const auto s = make_scheme("dgq");
  OwnedTensor x = random_tensor(64, 32, 4);
  store_element(x.mut(), 40 * 32 + 9, std::numeric_limits<float>::quiet_NaN());
  CHECK_THROWS_AS(s->compress(x.view(), TensorRole::key), InputError);
  CHECK_THROWS_WITH(s->compress(x.view(), TensorRole::key), Contains("token 40, channel 9"));
}

TEST_CASE("dgq decompress rejects corrupt parts", "[scheme][dgq][errors]") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    const auto s = make_scheme("dgq:" + mode);
    const OwnedTensor x = variance_steps(300, 64, 5);
    const Compressed good = s->compress(x.view(), TensorRole::key);
    REQUIRE(good.segment_edges().size() >= 3);  // a boundary, so every marker part is non-empty
    OwnedTensor out(DType::f16, 300, 64);
    for (std::size_t p = 0; p < good.parts.size(); ++p) {
      CAPTURE(good.parts[p].name);
      Compressed bad = good;
      bad.parts[p].bytes.pop_back();
      CHECK_THROWS_AS(s->decompress(bad, out.mut()), InputError);
      CHECK_THROWS_WITH(s->decompress(bad, out.mut()),
                        Contains("part '" + good.parts[p].name + "' has " +
                                 std::to_string(good.parts[p].bytes.size() - 1) + " bytes"));
    }
    // One segment's ranges more than the markers describe: caught by dgq_decode.
    Compressed extra = good;
    std::vector<std::uint8_t>& ranges = extra.parts[1].bytes;
    ranges.insert(ranges.end(), ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(ranges.size() / 2));
    CHECK_THROWS_AS(s->decompress(extra, out.mut()), InputError);
  }
}

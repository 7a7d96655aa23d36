// int8-group64 and int4-group64: 64-channel groups per token, the last one partial; int4 codes
// packed low nibble first.
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

// Reference min/max of token t's group g, recomputed from the input.
std::pair<float, float> group_range(const OwnedTensor& x, std::int64_t t, std::int64_t g) {
  float lo = INFINITY, hi = -INFINITY;
  for (std::int64_t c = g * 64; c < std::min<std::int64_t>(x.channels, (g + 1) * 64); ++c) {
    lo = std::fmin(lo, x.at(t * x.channels + c));
    hi = std::fmax(hi, x.at(t * x.channels + c));
  }
  return {lo, hi};
}

}  // namespace

TEST_CASE("group64 stores one range per 64 channels, the last group partial", "[scheme][group64][edge]") {
  for (const std::string f : {"int8-group64", "int4-group64"}) {
    const auto s = make_scheme(f);
    for (const std::int64_t d : kEdgeChannels) {
      CAPTURE(f, d);
      const OwnedTensor x = random_tensor(3, d, 50 + static_cast<std::uint64_t>(d));
      const Compressed c = s->compress(x.view(), TensorRole::key);
      const std::int64_t groups = (d + 63) / 64;
      REQUIRE(c.part_bytes("ranges") == static_cast<std::uint64_t>(3 * groups * 8));
      const std::uint64_t n = static_cast<std::uint64_t>(3 * d);
      CHECK(c.part_bytes("codes") == (f == "int8-group64" ? n : (n + 1) / 2));
      for (std::int64_t t = 0; t < 3; ++t) {
        for (std::int64_t g = 0; g < groups; ++g) {
          float lo, hi;
          std::memcpy(&lo, c.find("ranges")->bytes.data() + (t * groups + g) * 8, 4);
          std::memcpy(&hi, c.find("ranges")->bytes.data() + (t * groups + g) * 8 + 4, 4);
          const auto [elo, ehi] = group_range(x, t, g);
          CHECK(lo == elo);
          CHECK(hi == ehi);
        }
      }
    }
  }
}

TEST_CASE("int4-group64 packs element 2j in the low nibble of byte j", "[scheme][group64][int4]") {
  // lo = 0, hi = 15: inv = 1 and the codes are the values; 7.5 -> 8 and 6.5 -> 6 (half to even).
  const OwnedTensor x = tensor_from({0.0f, 15.0f, 1.0f, 2.0f, 7.5f, 6.5f, 14.0f}, 1, 7);
  const Compressed c = make_scheme("int4-group64")->compress(x.view(), TensorRole::value);
  CHECK(c.find("codes")->bytes == std::vector<std::uint8_t>{0xf0, 0x21, 0x68, 0x0e});
  const OwnedTensor y = decompressed(*make_scheme("int4-group64"), c);
  const std::vector<float> expected{0.0f, 15.0f, 1.0f, 2.0f, 8.0f, 6.0f, 14.0f};
  for (std::int64_t i = 0; i < 7; ++i) CHECK(y.at(i) == expected[i]);
}

TEST_CASE("int4 codes of an odd-length row continue in the same byte stream", "[scheme][group64][int4][edge]") {
  // Two tokens of 1 channel: both constant, codes 0, one byte; decode exact.
  const OwnedTensor x = tensor_from({3.0f, -5.0f}, 2, 1);
  const auto s = make_scheme("int4-group64");
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(c.find("codes")->bytes == std::vector<std::uint8_t>{0x00});
  CHECK(decompressed(*s, c).bytes == x.bytes);
}

TEST_CASE("group64 round trips stay within half a step plus rounding slack", "[scheme][group64][roundtrip]") {
  for (const auto& [f, levels] : {std::pair<std::string, int>{"int8-group64", 253}, {"int4-group64", 15}}) {
    const auto s = make_scheme(f);
    for (const DType t : {DType::f16, DType::f32}) {
      for (const std::int64_t d : kEdgeChannels) {
        OwnedTensor x = random_tensor(64, d, 700 + static_cast<std::uint64_t>(d), t);
        store_element(x.mut(), 0, -65504.0f);
        store_element(x.mut(), x.size() - 1, 6e-8f);
        const OwnedTensor y = decompressed(*s, s->compress(x.view(), TensorRole::value));
        for (std::int64_t i = 0; i < x.size(); ++i) {
          const auto [lo, hi] = group_range(x, i / d, (i % d) / 64);
          CAPTURE(f, dtype_name(t), d, i, x.at(i), y.at(i), lo, hi);
          CHECK(std::fabs(y.at(i) - x.at(i)) <= affine_bound(lo, hi, levels) + half_ulp(t, y.at(i)));
        }
      }
    }
  }
}

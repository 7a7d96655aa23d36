// int8-token: rule 7's codes with each token's own min/max.
#include "test_scheme_support.hpp"

#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {
std::vector<std::int8_t> codes_of(const Compressed& c) {
  const auto& b = c.find("codes")->bytes;
  return {b.begin(), b.end()};
}
}  // namespace

TEST_CASE("int8-token: a constant token codes -127 and decodes exactly", "[scheme][int8-token][edge]") {
  const auto s = make_scheme("int8-token");
  for (const float v : {0.0f, -0.0f, 1.5f, -65504.0f, 65504.0f, 6e-8f}) {
    CAPTURE(v);
    const OwnedTensor x = tensor_from(std::vector<float>(33, v), 1, 33);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    for (const std::int8_t code : codes_of(c)) CHECK(code == -127);
    const OwnedTensor y = decompressed(*s, c);
    for (std::int64_t i = 0; i < 33; ++i) CHECK(y.at(i) == x.at(i));
  }
}

TEST_CASE("int8-token: min and max get codes -127 and 126, ties round to even", "[scheme][int8-token]") {
  // lo = 0, hi = 253: inv = 1, so x - lo is q itself; 2.5 -> 2 and 3.5 -> 4 (half to even).
  const OwnedTensor x = tensor_from({0.0f, 253.0f, 2.5f, 3.5f, 126.0f}, 1, 5);
  const Compressed c = make_scheme("int8-token")->compress(x.view(), TensorRole::value);
  CHECK(codes_of(c) == std::vector<std::int8_t>{-127, 126, -125, -123, -1});
  float lo, hi;
  std::memcpy(&lo, c.find("ranges")->bytes.data(), 4);
  std::memcpy(&hi, c.find("ranges")->bytes.data() + 4, 4);
  CHECK(lo == 0.0f);
  CHECK(hi == 253.0f);
}

TEST_CASE("int8-token: ranges store no negative zero", "[scheme][int8-token][edge]") {
  const OwnedTensor x = tensor_from({-0.0f, 1.0f, -1.0f, -0.0f}, 2, 2);
  const Compressed c = make_scheme("int8-token")->compress(x.view(), TensorRole::value);
  const std::vector<std::uint8_t>& r = c.find("ranges")->bytes;
  std::uint32_t first_lo;
  std::memcpy(&first_lo, r.data(), 4);
  CHECK(first_lo == 0u);  // min(-0, 1) is stored as +0
}

TEST_CASE("int8-token round trip stays within half a step plus rounding slack", "[scheme][int8-token][roundtrip]") {
  const auto s = make_scheme("int8-token");
  for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
    for (const std::int64_t d : kEdgeChannels) {
      CAPTURE(dtype_name(t), d);
      OwnedTensor x = random_tensor(120, d, 300 + static_cast<std::uint64_t>(d), t);
      store_element(x.mut(), 0, 65504.0f);
      store_element(x.mut(), x.size() - 1, -65504.0f);
      const OwnedTensor y = decompressed(*s, s->compress(x.view(), TensorRole::key));
      for (std::int64_t tok = 0; tok < x.tokens; ++tok) {
        float lo = INFINITY, hi = -INFINITY;
        for (std::int64_t c = 0; c < d; ++c) {
          lo = std::fmin(lo, x.at(tok * d + c));
          hi = std::fmax(hi, x.at(tok * d + c));
        }
        for (std::int64_t c = 0; c < d; ++c) {
          const std::int64_t i = tok * d + c;
          CAPTURE(tok, c, x.at(i), y.at(i), lo, hi);
          CHECK(std::fabs(y.at(i) - x.at(i)) <= affine_bound(lo, hi, 253) + half_ulp(t, y.at(i)));
        }
      }
    }
  }
}

TEST_CASE("int8-token rejects a token range that overflows fp32", "[scheme][int8-token][errors]") {
  const OwnedTensor x = tensor_from({1.0f, 2.0f, -3e38f, 3e38f}, 2, 2, DType::f32);
  CHECK_THROWS_AS(make_scheme("int8-token")->compress(x.view(), TensorRole::key), InputError);
  CHECK_THROWS_WITH(make_scheme("int8-token")->compress(x.view(), TensorRole::key),
                    Catch::Matchers::Contains("token 1"));
}

TEST_CASE("int8-token with one channel returns every finite fp16 value exactly", "[scheme][int8-token][edge]") {
  // A one-channel token is constant (hi == lo, code -127, x^ = lo), so this runs every finite
  // fp16 pattern through the schemes' fp16 widening and narrowing (the F16C path where built).
  std::vector<std::uint16_t> finite;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7c00u) != 0x7c00u) finite.push_back(static_cast<std::uint16_t>(h));
  }
  OwnedTensor x(DType::f16, static_cast<std::int64_t>(finite.size()), 1);
  std::memcpy(x.bytes.data(), finite.data(), x.bytes.size());
  const auto s = make_scheme("int8-token");
  const OwnedTensor y = decompressed(*s, s->compress(x.view(), TensorRole::key));
  std::vector<std::uint16_t> expected = finite;
  for (std::uint16_t& h : expected) {
    if (h == 0x8000u) h = 0;  // the stored range endpoint has no negative zero (rule 6)
  }
  std::vector<std::uint16_t> got(finite.size());
  std::memcpy(got.data(), y.bytes.data(), y.bytes.size());
  CHECK(got == expected);
}

TEST_CASE("int8-token codes are DGQ rule 7's codes", "[scheme][int8-token]") {
  const OwnedTensor x = random_tensor(64, 100, 77);
  const Compressed c = make_scheme("int8-token")->compress(x.view(), TensorRole::key);
  const std::vector<std::int8_t> codes = codes_of(c);
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    float lo, hi;
    std::memcpy(&lo, c.find("ranges")->bytes.data() + 8 * t, 4);
    std::memcpy(&hi, c.find("ranges")->bytes.data() + 8 * t + 4, 4);
    const float inv = rules::code_inverse_step(lo, hi);
    for (std::int64_t d = 0; d < x.channels; ++d) {
      CAPTURE(t, d);
      CHECK(codes[t * 100 + d] == rules::quantize_code(x.at(t * 100 + d), lo, inv));
    }
  }
}

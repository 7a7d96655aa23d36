// vLLM's per-token-head caches (int8_per_token_head, int4_per_token_head, fp8_per_token_head):
// edge rows first (zero rows, the 1e-6 scale floor, int8's truncating store, int4's half-away
// rounding, zero point and nibble order), then an independent decoder written from the rules, the
// comparison with fp8-e4m3:scale=token, bytes per token-head, and golden digests.
#include "golden_scheme_digests.hpp"
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "dgq/baselines/fp8_e4m3.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

float pth_scale_at(const Compressed& c, std::size_t t) {
  float s;
  std::memcpy(&s, c.find("scale")->bytes.data() + 4 * t, 4);
  return s;
}

std::uint32_t pth_bits(float f) { return rules::float_bits(f); }

// The value vLLM's attention reads for channel d of a token from its stored bytes, written from
// docs/spec.md rules PTH1-PTH3 without the scheme's code: int8 and fp8 code * scale; int4
// (nibble - zp) * (scale with its low 4 bits cleared).
float pth_by_definition(const std::string& name, const std::uint8_t* codes, float stored, std::int64_t d) {
  if (name == "int8_per_token_head") return static_cast<float>(static_cast<std::int8_t>(codes[d])) * stored;
  if (name == "fp8_per_token_head") return fp8::e4m3_to_float(codes[d]) * stored;
  std::uint32_t bits;
  std::memcpy(&bits, &stored, 4);
  const int zp = static_cast<int>(bits & 15u);
  const std::uint32_t masked = bits & ~15u;
  float scale;
  std::memcpy(&scale, &masked, 4);
  const int nibble = (codes[d / 2] >> (4 * (d % 2))) & 15;
  return static_cast<float>(nibble - zp) * scale;
}

const char* const kPthNames[] = {"int8_per_token_head", "int4_per_token_head", "fp8_per_token_head"};

}  // namespace

TEST_CASE("per-token-head: a zero row stores the 1e-6 scale floor and decodes to zeros",
          "[scheme][per_token_head][edge]") {
  for (const std::string name : kPthNames) {
    CAPTURE(name);
    const auto s = make_scheme(name);
    const OwnedTensor x(DType::f16, 2, 64);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    for (std::size_t t = 0; t < 2; ++t) {
      // int4 hides zero point 0 in the low bits: the floor's bits with those four cleared.
      const std::uint32_t expected = name == "int4_per_token_head" ? (pth_bits(1e-6f) & ~15u) : pth_bits(1e-6f);
      CHECK(pth_bits(pth_scale_at(c, t)) == expected);
    }
    for (const std::uint8_t b : c.find("codes")->bytes) CHECK(b == 0);
    CHECK(decompressed(*s, c).bytes == x.bytes);
  }
}

TEST_CASE("int8_per_token_head: scale amax/127, x * (1/scale) truncated toward zero as Triton's int8 store does",
          "[scheme][per_token_head][edge]") {
  const auto s = make_scheme("int8_per_token_head");
  // amax 127 gives scale 1 and 1/scale 1: the codes are the values truncated.
  const OwnedTensor x = tensor_from({127.0f, 1.9f, -1.9f, 0.5f, -0.5f, 126.99f, -127.0f, 3.0f}, 1, 8, DType::f32);
  const Compressed c = s->compress(x.view(), TensorRole::value);
  CHECK(pth_scale_at(c, 0) == 1.0f);
  const std::vector<std::uint8_t> expected{127, 1, 0xff, 0, 0, 126, 0x81, 3};
  CHECK(c.find("codes")->bytes == expected);
  // A row whose amax/127 is below 1e-6 is coded with step 1e-6.
  const OwnedTensor tiny = tensor_from({5e-5f, -2.5e-5f}, 1, 2, DType::f32);
  const Compressed ct = s->compress(tiny.view(), TensorRole::value);
  CHECK(pth_scale_at(ct, 0) == 1e-6f);
  CHECK(static_cast<std::int8_t>(ct.find("codes")->bytes[0]) ==
        static_cast<std::int8_t>(std::trunc(5e-5f * (1.0f / 1e-6f))));
}

TEST_CASE("int4_per_token_head: min/max over 15 levels, zero point in the scale's low bits, half away from zero",
          "[scheme][per_token_head][edge]") {
  const auto s = make_scheme("int4_per_token_head");
  SECTION("scale 1, zero point 0: 2.5 -> 3 and 0.5 -> 1 (half away, not to even); even channel in the low nibble") {
    const OwnedTensor x = tensor_from({0.0f, 15.0f, 2.5f, 0.5f, 3.5f}, 1, 5, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(pth_bits(pth_scale_at(c, 0)) == (pth_bits(1.0f) & ~15u));
    const std::vector<std::uint8_t> expected{0xf0, 0x13, 0x04};  // (0,15) (3,1) (4,-)
    CHECK(c.find("codes")->bytes == expected);
    const OwnedTensor y = decompressed(*s, c);
    CHECK(y.get(0, 2) == 3.0f);
    CHECK(y.get(0, 3) == 1.0f);
  }
  SECTION("min -1, max 2: scale 0.2, zero point 5 stored in the low bits, decode (q - 5) * masked scale") {
    const OwnedTensor x = tensor_from({-1.0f, 2.0f, 0.0f, 0.5f}, 1, 4, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    const float stored = pth_scale_at(c, 0);
    CHECK((pth_bits(stored) & 15u) == 5u);
    CHECK((pth_bits(stored) & ~15u) == (pth_bits(3.0f / 15.0f) & ~15u));
    const auto& codes = c.find("codes")->bytes;
    CHECK((codes[0] & 15) == 0);
    CHECK((codes[0] >> 4) == 15);
    CHECK((codes[1] & 15) == 5);  // 0 sits on the zero point
    const OwnedTensor y = decompressed(*s, c);
    CHECK(y.get(0, 2) == 0.0f);
    CHECK(y.get(0, 0) == -5.0f * rules::bits_float(pth_bits(stored) & ~15u));
  }
  SECTION("an all-positive row clamps the zero point to 0") {
    const OwnedTensor x = tensor_from({1.0f, 16.0f}, 1, 2, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK((pth_bits(pth_scale_at(c, 0)) & 15u) == 0u);
    CHECK(c.find("codes")->bytes[0] == 0xf1);  // 1 -> 1, 16 -> clamp(16) = 15
  }
  SECTION("a range that overflows fp32 is refused") {
    const OwnedTensor x = tensor_from({-3e38f, 3e38f}, 1, 2, DType::f32);
    CHECK_THROWS_AS(s->compress(x.view(), TensorRole::key), InputError);
  }
}

TEST_CASE("fp8_per_token_head: scale amax/448 (floor 1e-6), codes e4m3 of x * (1/scale)", "[scheme][per_token_head]") {
  const auto s = make_scheme("fp8_per_token_head");
  const OwnedTensor x = tensor_from({448.0f, 1.0f, -3.0f, 0.0f, 1e-3f, 500.0f}, 1, 6, DType::f32);
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(pth_scale_at(c, 0) == 500.0f / 448.0f);
  const float inv = 1.0f / (500.0f / 448.0f);
  for (std::int64_t d = 0; d < 6; ++d) {
    CAPTURE(d);
    CHECK(c.find("codes")->bytes[static_cast<std::size_t>(d)] == fp8::float_to_e4m3(x.get(0, d) * inv));
  }
  CHECK(c.find("codes")->bytes[5] == 0x7e);
}

TEST_CASE("fp8_per_token_head against fp8-e4m3:scale=token: equal scales above the floor, codes nearly equal",
          "[scheme][per_token_head][fp8]") {
  const auto pth = make_scheme("fp8_per_token_head");
  const auto dgq_token = make_scheme("fp8-e4m3:scale=token");
  const OwnedTensor x = random_tensor(DType::f16, 200, 128, 901);
  const Compressed a = pth->compress(x.view(), TensorRole::key);
  const Compressed b = dgq_token->compress(x.view(), TensorRole::key);
  CHECK(a.find("scale")->bytes == b.find("scale")->bytes);
  // vLLM multiplies by 1/scale where fp8-e4m3 divides by scale: the two differ in the last bit
  // of x/scale now and then, which moves a code only when it lands on an e4m3 rounding midpoint.
  const auto& ca = a.find("codes")->bytes;
  const auto& cb = b.find("codes")->bytes;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (ca[i] == cb[i]) continue;
    ++differ;
    CHECK((ca[i] & 0x80) == (cb[i] & 0x80));
    CHECK(std::abs((ca[i] & 0x7f) - (cb[i] & 0x7f)) == 1);
  }
  INFO("codes that differ: " << differ << " of " << ca.size());
  CHECK(differ * 1000 < ca.size());
  // Below the floor the two formats store different scales.
  const OwnedTensor tiny = tensor_from({1e-4f, -5e-5f}, 1, 2, DType::f32);
  CHECK(pth_scale_at(pth->compress(tiny.view(), TensorRole::key), 0) == 1e-6f);
  CHECK(pth_scale_at(dgq_token->compress(tiny.view(), TensorRole::key), 0) == 1e-4f / 448.0f);
}

TEST_CASE("per-token-head: the decoder written from the rules agrees bit for bit", "[scheme][per_token_head][oracle]") {
  for (const std::string name : kPthNames) {
    for (const std::int64_t d : {64, 128, 33}) {
      CAPTURE(name, d);
      const auto s = make_scheme(name);
      const OwnedTensor x = random_tensor(DType::f32, 40, d, 77 + static_cast<std::uint64_t>(d));
      const Compressed c = s->compress(x.view(), TensorRole::value);
      OwnedTensor y(DType::f32, 40, d);
      s->decompress(c, y.mut());
      const std::uint64_t row =
          name == "int4_per_token_head" ? static_cast<std::uint64_t>((d + 1) / 2) : static_cast<std::uint64_t>(d);
      std::size_t mismatches = 0;
      for (std::int64_t t = 0; t < 40; ++t) {
        const float stored = pth_scale_at(c, static_cast<std::size_t>(t));
        const std::uint8_t* codes = c.find("codes")->bytes.data() + static_cast<std::uint64_t>(t) * row;
        for (std::int64_t ch = 0; ch < d; ++ch) {
          if (rules::float_bits(pth_by_definition(name, codes, stored, ch)) != rules::float_bits(y.get(t, ch)))
            ++mismatches;
        }
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("per-token-head: bytes per token-head at head_dim 64 and 128", "[scheme][per_token_head]") {
  // int8 / fp8: D code bytes + a 4-byte scale; int4: D/2 + 4.
  CHECK(make_scheme("int8_per_token_head")->planned_bytes(1, 64, DType::f16, TensorRole::key) == 68);
  CHECK(make_scheme("int8_per_token_head")->planned_bytes(1, 128, DType::f16, TensorRole::key) == 132);
  CHECK(make_scheme("fp8_per_token_head")->planned_bytes(1, 64, DType::f16, TensorRole::key) == 68);
  CHECK(make_scheme("fp8_per_token_head")->planned_bytes(1, 128, DType::f16, TensorRole::key) == 132);
  CHECK(make_scheme("int4_per_token_head")->planned_bytes(1, 64, DType::f16, TensorRole::key) == 36);
  CHECK(make_scheme("int4_per_token_head")->planned_bytes(1, 128, DType::f16, TensorRole::key) == 68);
  CHECK(make_scheme("int4_per_token_head")->planned_bytes(10, 33, DType::f16, TensorRole::key) == 10 * (17 + 4));
}

TEST_CASE("per-token-head: a stored non-finite scale is refused as corrupt", "[scheme][per_token_head][edge]") {
  for (const std::string name : kPthNames) {
    CAPTURE(name);
    const auto s = make_scheme(name);
    const OwnedTensor x = random_tensor(DType::f16, 3, 16, 5);
    Compressed c = s->compress(x.view(), TensorRole::key);
    const float nan = std::nanf("");
    std::memcpy(c.parts[1].bytes.data() + 4, &nan, 4);
    OwnedTensor y(DType::f16, 3, 16);
    CHECK_THROWS_AS(s->decompress(c, y.mut()), InputError);
  }
}

// Golden digests: FNV-1a 64 over every part in part order (codes, scale) for splitmix64 data
// (test_dgq_support.hpp, amplitude 4) in f16, 37 tokens. Made by this implementation on
// 2026-12-02 and checked against the rule-by-rule decoder above; reprint with
//   DGQ_PRINT_GOLDEN=1 build/tests/test_reference "[per_token_head][golden]"
TEST_CASE("per-token-head golden digests", "[scheme][per_token_head][golden]") {
  check_golden_scheme_digests({
      {"int8_per_token_head", 128, "d7345b1b0d0716b4"},
      {"int8_per_token_head", 64, "b0327ac14d4f8414"},
      {"int4_per_token_head", 128, "63fafd88cba592e4"},
      {"int4_per_token_head", 64, "b5d9472e4a3dbcc2"},
      {"fp8_per_token_head", 128, "e3fe748d8709f6d6"},
      {"fp8_per_token_head", 64, "f144f431ffabe930"},
  });
}

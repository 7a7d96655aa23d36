// NVFP4 (nvfp4, nvfp4_4over6): the e2m1 converter against its definition, at every rounding
// midpoint and (where the CUDA toolkit is installed) against cuda_fp4.h's host conversions; then
// the scheme's edge blocks (zero, one nonzero, midpoints, saturation, subnormal and underflowing
// block scales), the 4over6 choice on blocks built for each side, an independent decoder, bytes
// per token-head, the scale key and its causal rule, and golden digests.
#include "golden_scheme_digests.hpp"
#include "minifloat_definitions.hpp"
#include "test_causal_support.hpp"
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include "dgq/baselines/fp4_e2m1.hpp"
#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/causal.hpp"

#ifdef DGQ_CUDA_FP_ORACLE  // tests/CMakeLists.txt: the toolkit's headers were found
// The toolkit's header leaves a parameter unused; this build warns on that.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <cuda_fp4.h>
#pragma GCC diagnostic pop
#define DGQ_HAVE_CUDA_FP4_ORACLE 1
#endif

using namespace dgq;
using namespace dgq::test;

namespace {

float nvfp4_global(const Compressed& c, std::size_t i = 0) {
  float g;
  std::memcpy(&g, c.find("global")->bytes.data() + 4 * i, 4);
  return g;
}

int nvfp4_code(const Compressed& c, std::int64_t channels, std::int64_t t, std::int64_t d) {
  const std::uint8_t b = c.find("codes")->bytes[static_cast<std::size_t>(t * ((channels + 1) / 2) + d / 2)];
  return d % 2 == 0 ? (b & 15) : (b >> 4);
}

// Token 0 fixes g = 2.625/2688 = 2^-10 exactly (scale=prefix,prefix=1, its block 1 holds 2.625),
// so 1/g = 1024 and a block of amax 1.5 gets block scale 1024*1.5/6 = 256 and multiplier 4.
OwnedTensor nvfp4_row_with_power_of_two_global(const std::vector<float>& block0) {
  std::vector<float> v(32, 0.0f);
  for (std::size_t i = 0; i < block0.size(); ++i) v[i] = block0[i];
  v[16] = 2.625f;
  return tensor_from(v, 1, 32, DType::f32);
}

}  // namespace

TEST_CASE("e2m1 decodes all 16 codes as defined and encodes each value back", "[scheme][nvfp4][edge]") {
  for (int c = 0; c < 16; ++c) {
    CAPTURE(c);
    CHECK(rules::float_bits(fp4::e2m1_to_float(static_cast<std::uint8_t>(c))) ==
          rules::float_bits(e2m1_by_definition(c)));
    CHECK(fp4::float_to_e2m1(e2m1_by_definition(c)) == c);
  }
  CHECK(fp4::e2m1_to_float(7) == 6.0f);
  CHECK(fp4::e2m1_to_float(1) == 0.5f);
}

TEST_CASE("e2m1 rounds midpoints to even, neighbours to nearest, and saturates to 6", "[scheme][nvfp4][edge]") {
  for (int c = 0; c < 7; ++c) {
    const float a = e2m1_by_definition(c), b = e2m1_by_definition(c + 1);
    const float mid = 0.5f * (a + b);
    const int even = c % 2 == 0 ? c : c + 1;
    for (const float sign : {1.0f, -1.0f}) {
      const int sign_bit = sign < 0 ? 8 : 0;
      CAPTURE(c, sign, mid);
      CHECK(fp4::float_to_e2m1(sign * mid) == (even | sign_bit));
      CHECK(fp4::float_to_e2m1(sign * std::nextafter(mid, 0.0f)) == (c | sign_bit));
      CHECK(fp4::float_to_e2m1(sign * std::nextafter(mid, 100.0f)) == ((c + 1) | sign_bit));
    }
  }
  for (const float x : {6.0f, 6.5f, 7.0f, 1e30f, std::numeric_limits<float>::infinity()}) {
    CAPTURE(x);
    CHECK(fp4::float_to_e2m1(x) == 7);
    CHECK(fp4::float_to_e2m1(-x) == 15);
  }
  CHECK(fp4::float_to_e2m1(-0.0f) == 8);
  CHECK(fp4::float_to_e2m1(std::ldexp(1.0f, -140)) == 0);
}

#ifdef DGQ_HAVE_CUDA_FP4_ORACLE
TEST_CASE("e2m1 matches cuda_fp4.h: every code decoded, every rounding class and a stride over all floats",
          "[scheme][nvfp4][oracle]") {
  for (int c = 0; c < 16; ++c) {
    CAPTURE(c);
    const __half_raw h = __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1);
    CHECK(rules::float_bits(rules::half_to_float(h.x)) ==
          rules::float_bits(fp4::e2m1_to_float(static_cast<std::uint8_t>(c))));
  }
  std::uint64_t compared = 0, mismatches = 0;
  auto compare = [&](std::uint32_t bits) {
    const float x = rules::bits_float(bits);
    if (std::isnan(x)) return;
    ++compared;
    const int cuda = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
    if (fp4::float_to_e2m1(x) != cuda && ++mismatches <= 5) {
      UNSCOPED_INFO("x = " << x << " (bits " << bits << "): dgq " << int(fp4::float_to_e2m1(x)) << ", cuda " << cuda);
    }
  };
  // Every exponent with the top 2 mantissa bits (the kept bit and the round bit) and the rest
  // zero, one, or all ones, both signs.
  for (std::uint32_t exponent = 0; exponent < 256; ++exponent) {
    for (std::uint32_t top = 0; top < 4; ++top) {
      for (const std::uint32_t low : {0u, 1u, 0x100000u, 0x1fffffu}) {
        for (const std::uint32_t sign : {0u, 0x80000000u}) compare(sign | (exponent << 23) | (top << 21) | low);
      }
    }
  }
  for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 65521) compare(static_cast<std::uint32_t>(bits));
  INFO("compared " << compared << " floats");
  CHECK(compared > 60000);
  CHECK(mismatches == 0);
}
#endif

TEST_CASE("nvfp4: a zero block stores scale 0 and codes 0; a block with one nonzero maps it to 6",
          "[scheme][nvfp4][edge]") {
  const auto s = make_scheme("nvfp4:scale=token");
  std::vector<float> v(32, 0.0f);
  v[5] = 3.0f;  // block 0: one nonzero; block 1: all zero
  const OwnedTensor x = tensor_from(v, 1, 32, DType::f32);
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(nvfp4_global(c) == 3.0f / 2688.0f);
  // 1/g = 896, 896 * (3 * (1/6)) = 448: the block scale saturates exactly at e4m3's largest.
  CHECK(c.find("scales")->bytes == std::vector<std::uint8_t>{0x7e, 0x00});
  for (std::int64_t d = 0; d < 32; ++d) CHECK(nvfp4_code(c, 32, 0, d) == (d == 5 ? 7 : 0));
  const OwnedTensor y = decompressed(*s, c);
  CHECK(std::fabs(y.get(0, 5) - 3.0f) <= std::ldexp(3.0f, -22));
  for (std::int64_t d = 0; d < 32; ++d)
    if (d != 5) CHECK(y.get(0, d) == 0.0f);
}

TEST_CASE("nvfp4: values on e2m1 midpoints round to even after the block multiplier", "[scheme][nvfp4][edge]") {
  const auto s = make_scheme("nvfp4:prefix=1");
  // Multiplier 4: x*4 = 6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5 and their negatives.
  const OwnedTensor x =
      nvfp4_row_with_power_of_two_global({1.5f, 0.0625f, 0.1875f, 0.3125f, 0.4375f, 0.625f, 0.875f, 1.25f, -0.0625f,
                                          -0.1875f, -0.3125f, -0.4375f, -0.625f, -0.875f, -1.25f, -1.5f});
  const Compressed c = s->compress(x.view(), TensorRole::value);
  CHECK(nvfp4_global(c) == std::ldexp(1.0f, -10));
  CHECK(c.find("scales")->bytes[0] == 0x78);  // 256
  CHECK(c.find("scales")->bytes[1] == 0x7e);  // 1024 * 2.625/6 = 448
  const int expected[16] = {7, 0, 2, 2, 4, 4, 6, 6, 8, 10, 10, 12, 12, 14, 14, 15};
  for (std::int64_t d = 0; d < 16; ++d) {
    CAPTURE(d);
    CHECK(nvfp4_code(c, 32, 0, d) == expected[d]);
  }
}

TEST_CASE("nvfp4: a prefix scale saturates later values; subnormal and underflowing block scales",
          "[scheme][nvfp4][edge]") {
  SECTION("scale=prefix: a later token far above the prefix's amax decodes to 6*448*g") {
    const auto s = make_scheme("nvfp4:prefix=1");
    std::vector<float> v(64, 0.0f);
    v[16] = 2.625f;      // token 0: g = 2^-10
    v[32 + 3] = 100.0f;  // token 1
    const OwnedTensor x = tensor_from(v, 2, 32, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[2] == 0x7e);
    CHECK(nvfp4_code(c, 32, 1, 3) == 7);
    CHECK(decompressed(*s, c).get(1, 3) == 2.625f);
  }
  SECTION("a block scale in e4m3's subnormal range, and one that rounds to 0") {
    const auto s = make_scheme("nvfp4:prefix=1");
    // 1024 * b/6 = 3 * 2^-9 for b = 9 * 2^-18: e4m3 subnormal code 3. Block 2 is smaller than
    // half the smallest e4m3 step after scaling: its scale is 0 and every code 0.
    std::vector<float> v(48, 0.0f);
    v[16] = 2.625f;
    v[0] = std::ldexp(9.0f, -18);
    v[1] = -std::ldexp(3.0f, -18);
    v[32] = std::ldexp(1.0f, -25);
    v[33] = -std::ldexp(1.0f, -25);
    const OwnedTensor x = tensor_from(v, 1, 48, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[0] == 0x03);
    CHECK(c.find("scales")->bytes[2] == 0x00);
    CHECK(nvfp4_code(c, 48, 0, 0) == 7);
    CHECK(nvfp4_code(c, 48, 0, 32) == 0);
    CHECK(nvfp4_code(c, 48, 0, 33) == 8);  // -x * 0 is -0: vLLM's conversion keeps the sign
    const OwnedTensor y = decompressed(*s, c);
    CHECK(std::fabs(y.get(0, 0) - v[0]) <= std::ldexp(v[0], -20));
    CHECK(y.get(0, 32) == 0.0f);
  }
}

TEST_CASE("nvfp4_4over6: max/4 wins on a block built on its grid, max/6 on one built on the other, ties keep 6",
          "[scheme][nvfp4][4over6]") {
  const auto s6 = make_scheme("nvfp4:prefix=1");
  const auto s46 = make_scheme("nvfp4_4over6:prefix=1");
  SECTION("on the max/4 grid (multiplier 1024/384): 1.5 -> 4, 1.125 -> 3, 0.5625 -> 1.5, 0.1875 -> 0.5") {
    const OwnedTensor x = nvfp4_row_with_power_of_two_global({1.5f, 1.125f, 0.5625f, 0.1875f, -0.75f, 0.375f});
    const Compressed c = s46->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[0] == 0x7c);  // 384 = 1024 * 1.5/4
    const OwnedTensor y = decompressed(*s46, c);
    for (std::int64_t d = 0; d < 16; ++d) CHECK(y.get(0, d) == x.get(0, d));
    // nvfp4 (max/6 only) cannot hold 1.125 exactly.
    CHECK(decompressed(*s6, s6->compress(x.view(), TensorRole::key)).get(0, 1) != 1.125f);
  }
  SECTION("on the max/6 grid (multiplier 4): 1.5, 1, 0.5, 0.25, 0.125 stay exact with max/6") {
    const OwnedTensor x = nvfp4_row_with_power_of_two_global({1.5f, 1.0f, 0.5f, 0.25f, 0.125f, -0.375f});
    const Compressed c = s46->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[0] == 0x78);  // 256 = 1024 * 1.5/6
    CHECK(c.parts == s6->compress(x.view(), TensorRole::key).parts);
  }
  SECTION("a zero block: both errors 0, the max/6 scale (0) is kept") {
    const OwnedTensor x = nvfp4_row_with_power_of_two_global({});
    CHECK(s46->compress(x.view(), TensorRole::key).find("scales")->bytes[0] == 0x00);
  }
}

TEST_CASE("nvfp4: the decoder written from the definitions agrees bit for bit", "[scheme][nvfp4][oracle]") {
  for (const std::string spec : {"nvfp4", "nvfp4:scale=token", "nvfp4_4over6", "nvfp4_4over6:scale=tensor"}) {
    for (const std::int64_t d : {64, 128, 40}) {
      CAPTURE(spec, d);
      const auto s = make_scheme(spec);
      const OwnedTensor x = random_tensor(DType::f32, 30, d, 300 + static_cast<std::uint64_t>(d));
      const Compressed c = s->compress(x.view(), TensorRole::value);
      OwnedTensor y(DType::f32, 30, d);
      s->decompress(c, y.mut());
      const bool per_token = parse_spec(spec).args.word("scale") == "token";
      const std::int64_t blocks = (d + 15) / 16;
      std::size_t mismatches = 0;
      for (std::int64_t t = 0; t < 30; ++t) {
        const float g = nvfp4_global(c, per_token ? static_cast<std::size_t>(t) : 0);
        for (std::int64_t ch = 0; ch < d; ++ch) {
          const int sf = c.find("scales")->bytes[static_cast<std::size_t>(t * blocks + ch / 16)];
          const float want = e2m1_by_definition(nvfp4_code(c, d, t, ch)) * e4m3_by_definition(sf) * g;
          if (rules::float_bits(want) != rules::float_bits(y.get(t, ch))) ++mismatches;
        }
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("nvfp4: bytes per token-head at head_dim 64 and 128, plus the global scale", "[scheme][nvfp4]") {
  for (const std::string name : {"nvfp4", "nvfp4_4over6"}) {
    const auto s = make_scheme(name);
    // D/2 code bytes + D/16 e4m3 scales per token, and one fp32 global per tensor.
    CHECK(s->planned_bytes(1, 64, DType::f16, TensorRole::key) == 32 + 4 + 4);
    CHECK(s->planned_bytes(1000, 64, DType::f16, TensorRole::key) == 1000 * 36 + 4);
    CHECK(s->planned_bytes(1000, 128, DType::f16, TensorRole::key) == 1000 * 72 + 4);
    CHECK(make_scheme(name + ":scale=token")->planned_bytes(1000, 128, DType::f16, TensorRole::key) == 1000 * 76);
    CHECK(s->planned_bytes(3, 33, DType::f16, TensorRole::key) == 3 * (17 + 3) + 4);  // a partial last block
    CHECK(s->planned_bytes(0, 128, DType::f16, TensorRole::key) == 0);
  }
}

TEST_CASE("nvfp4 scale key: canonical specs, refusals, and the causal rule of each kind", "[scheme][nvfp4][registry]") {
  CHECK(make_scheme("nvfp4")->spec() == "nvfp4");
  CHECK(make_scheme("nvfp4:scale=prefix,prefix=128")->spec() == "nvfp4");
  CHECK(make_scheme("nvfp4:prefix=16")->spec() == "nvfp4:prefix=16");
  CHECK(make_scheme("nvfp4:scale=token,prefix=16")->spec() == "nvfp4:scale=token");
  CHECK(make_scheme("nvfp4_4over6:scale=tensor")->spec() == "nvfp4_4over6:scale=tensor");
  CHECK_THROWS_WITH(make_scheme("nvfp4:scale=head"),
                    "nvfp4: parameter 'scale' = 'head' is not one of tensor, token, prefix");
  CHECK_THROWS_WITH(make_scheme("nvfp4_4over6:scale=head"),
                    "nvfp4_4over6: parameter 'scale' = 'head' is not one of tensor, token, prefix");
  const OwnedTensor x = random_tensor(DType::f16, 6, 32, 4);
  CHECK_THROWS_WITH(make_scheme("nvfp4:scale=tensor")->causal_schedule(x.view(), TensorRole::key),
                    Catch::Contains("has no causal form; use scale=prefix"));
  CHECK_THROWS_AS(make_scheme("nvfp4_4over6:scale=tensor")->causal_form(), ParameterError);
  const CausalSchedule p = make_scheme("nvfp4:prefix=4")->causal_schedule(x.view(), TensorRole::key);
  CHECK(p.final_tokens == std::vector<std::uint32_t>{0, 0, 0, 4, 5, 6});
  const CausalSchedule t = make_scheme("nvfp4:scale=token")->causal_schedule(x.view(), TensorRole::key);
  CHECK(t.final_tokens == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("causal: nvfp4 scale=prefix is final from its N-th token on, the literal cache agrees (rule C5)",
          "[scheme][nvfp4][causal]") {
  for (const std::string family : {"nvfp4", "nvfp4_4over6"}) {
    for (const std::int64_t n : {1, 16, 17}) {
      const auto s = make_scheme(family + ":prefix=" + std::to_string(n));
      const OwnedTensor x = causal_regime_tensor(100, 40, 610);
      CAPTURE(family, n);
      const CausalSchedule sched = s->causal_schedule(x.view(), TensorRole::key);
      check_schedule_shape(sched, 100);
      for (std::int64_t t = 0; t < 100; ++t) {
        const std::int64_t want = t < n - 1 ? 0 : t + 1;
        REQUIRE(sched.final_tokens[static_cast<std::size_t>(t)] == static_cast<std::uint32_t>(want));
        // 40 channels: 20 code bytes and 3 block scales per token, one fp32 global.
        REQUIRE(sched.final_bytes[static_cast<std::size_t>(t)] ==
                (want == 0 ? 0 : static_cast<std::uint64_t>(want * 23 + 4)));
      }
      for (const std::int64_t batch : {1, 7}) check_cache_against_timeline(*s, x, TensorRole::key, batch);
    }
  }
}

// Golden digests: FNV-1a 64 over every part in part order (global, scales, codes) for splitmix64
// data (test_dgq_support.hpp, amplitude 4) in f16, 37 tokens (below the default prefix of 128,
// so `nvfp4` takes the global scale of all of them here; `prefix=8` saturates later tokens).
// Made by this implementation on 2026-12-02 and checked against the definition decoder above;
// reprint with
//   DGQ_PRINT_GOLDEN=1 build/tests/test_reference "[nvfp4][golden]"
TEST_CASE("nvfp4 golden digests", "[scheme][nvfp4][golden]") {
  check_golden_scheme_digests({
      {"nvfp4", 128, "d3ae061e37e71f4e"},
      {"nvfp4", 64, "3dbc2f1ce494e82c"},
      {"nvfp4:scale=token", 128, "997636bbe34da770"},
      {"nvfp4_4over6", 128, "b5c584c5de87ec17"},
      {"nvfp4_4over6", 64, "c9020be501135fc1"},
      {"nvfp4_4over6:prefix=8", 128, "f76c196bc62ed6ae"},
  });
}

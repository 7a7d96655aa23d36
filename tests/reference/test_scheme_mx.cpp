// OCP MX (mxfp4, mxfp8): the e8m0 scale against its definition and (where the CUDA toolkit is
// installed) against cuda_fp8.h's __nv_cvt_float_to_e8m0 / __nv_cvt_e8m0_to_bf16raw; then the
// scheme's edge blocks (zero, one nonzero, element midpoints, saturation, tiny amax), an
// independent decoder, bytes per token-head and golden digests.
#include "golden_scheme_digests.hpp"
#include "minifloat_definitions.hpp"
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include "dgq/baselines/e8m0.hpp"
#include "dgq/baselines/fp4_e2m1.hpp"
#include "dgq/baselines/fp8_e4m3.hpp"

#ifdef DGQ_CUDA_FP_ORACLE  // tests/CMakeLists.txt: the toolkit's headers were found
#include <cuda_fp8.h>
#define DGQ_HAVE_CUDA_E8M0_ORACLE 1
#endif

using namespace dgq;
using namespace dgq::test;

namespace {

// floor(log2(a)) for a > 0 through frexp (a = m * 2^e, m in [0.5, 1)), not ilogb as the scheme.
int mx_floor_log2(float a) {
  int e = 0;
  (void)std::frexp(a, &e);
  return e - 1;
}

int mx_fp4_code(const Compressed& c, std::int64_t channels, std::int64_t t, std::int64_t d) {
  const std::uint8_t b = c.find("codes")->bytes[static_cast<std::size_t>(t * ((channels + 1) / 2) + d / 2)];
  return d % 2 == 0 ? (b & 15) : (b >> 4);
}

}  // namespace

TEST_CASE("e8m0 decodes every code as 2^(c-127), 0xFF as NaN", "[scheme][mx][edge]") {
  for (int c = 0; c < 255; ++c) {
    CAPTURE(c);
    CHECK(e8m0::to_float(static_cast<std::uint8_t>(c)) == std::ldexp(1.0f, c - 127));
  }
  CHECK(std::isnan(e8m0::to_float(0xff)));
}

TEST_CASE("MX shared exponent: floor(log2(amax)) - emax, clamped to [-127, 127]; a zero block takes -127",
          "[scheme][mx][edge]") {
  CHECK(e8m0::shared_exponent(0.0f, 2) == -127);
  CHECK(e8m0::shared_exponent(1.0f, 2) == -2);
  CHECK(e8m0::shared_exponent(7.99f, 2) == 0);
  CHECK(e8m0::shared_exponent(8.0f, 2) == 1);
  CHECK(e8m0::shared_exponent(448.0f, 8) == 0);
  CHECK(e8m0::shared_exponent(std::ldexp(1.0f, -149), 2) == -127);  // the smallest fp32 subnormal
  CHECK(e8m0::shared_exponent(std::numeric_limits<float>::max(), 2) == 125);
  for (std::uint32_t bits = 1; bits < 0x7f800000u; bits += 4099) {
    const float a = rules::bits_float(bits);
    for (const int emax : {2, 8}) {
      CAPTURE(a, emax);
      CHECK(e8m0::shared_exponent(a, emax) == std::max(mx_floor_log2(a) - emax, -127));
    }
  }
}

#ifdef DGQ_HAVE_CUDA_E8M0_ORACLE
TEST_CASE("e8m0 matches cuda_fp8.h: encode rounding toward zero over a stride of floats, decode of every code",
          "[scheme][mx][oracle]") {
  for (int c = 0; c < 256; ++c) {
    CAPTURE(c);
    const __nv_bfloat16_raw b = __nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c));
    const float cuda = rules::bf16_to_float(b.x);
    if (c == 0xff) {
      CHECK(std::isnan(cuda));
    } else {
      CHECK(rules::float_bits(cuda) == rules::float_bits(e8m0::to_float(static_cast<std::uint8_t>(c))));
    }
  }
  // The shared scale 2^(floor(log2 amax) - emax) is CUDA's e8m0 of amax * 2^-emax rounded toward
  // zero (which clips below 2^-127 to code 0, as a zero block takes).
  std::uint64_t compared = 0, mismatches = 0;
  for (std::uint64_t bits = 0; bits < 0x7f800000ull; bits += 8191) {
    const float a = rules::bits_float(static_cast<std::uint32_t>(bits));
    for (const int emax : {2, 8}) {
      ++compared;
      const int cuda = __nv_cvt_float_to_e8m0(std::ldexp(a, -emax), __NV_SATFINITE, cudaRoundZero);
      if (e8m0::encode_exponent(e8m0::shared_exponent(a, emax)) != cuda && ++mismatches <= 5) {
        UNSCOPED_INFO("amax " << a << " emax " << emax << ": cuda " << cuda);
      }
    }
  }
  INFO("compared " << compared);
  CHECK(compared > 100000);
  CHECK(mismatches == 0);
}
#endif

TEST_CASE("mx: a zero block stores e8m0 code 0 and zero codes; one nonzero 1.0 decodes exactly", "[scheme][mx][edge]") {
  for (const std::string name : {"mxfp4", "mxfp8"}) {
    CAPTURE(name);
    const auto s = make_scheme(name);
    std::vector<float> v(64, 0.0f);
    v[40] = 1.0f;  // block 1; block 0 all zero
    const OwnedTensor x = tensor_from(v, 1, 64, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    const int e = name == "mxfp4" ? -2 : -8;
    CHECK(c.find("scales")->bytes == std::vector<std::uint8_t>{0, static_cast<std::uint8_t>(127 + e)});
    if (name == "mxfp4") {
      CHECK(mx_fp4_code(c, 64, 0, 40) == 6);  // 1 * 2^2 = 4
    } else {
      CHECK(c.find("codes")->bytes[40] == fp8::float_to_e4m3(256.0f));
    }
    CHECK(decompressed(*s, c).bytes == x.bytes);
  }
}

TEST_CASE("mxfp4: elements round to nearest even at the midpoints and saturate to 6", "[scheme][mx][edge]") {
  const auto s = make_scheme("mxfp4");
  // amax 4 gives e = 0: the values are the elements' inputs.
  const OwnedTensor x = tensor_from({4.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, -3.5f}, 1, 8, DType::f32);
  const Compressed c = s->compress(x.view(), TensorRole::value);
  CHECK(c.find("scales")->bytes[0] == 127);
  const int expected[8] = {6, 0, 2, 2, 4, 4, 6, 14};
  for (std::int64_t d = 0; d < 8; ++d) CHECK(mx_fp4_code(c, 8, 0, d) == expected[d]);
  // amax 7.5: floor(log2) = 2, e = 0, 7.5 saturates to 6 as the OCP spec clamps.
  const OwnedTensor big = tensor_from({7.5f, -7.0f, 5.0f}, 1, 3, DType::f32);
  const OwnedTensor y = decompressed(*s, s->compress(big.view(), TensorRole::value));
  CHECK(y.get(0, 0) == 6.0f);
  CHECK(y.get(0, 1) == -6.0f);
  CHECK(y.get(0, 2) == 4.0f);  // 5 is the midpoint of 4 and 6: even
}

TEST_CASE("mxfp8: amax 448 * 2^k is exact; values beyond 448 * 2^e saturate", "[scheme][mx][edge]") {
  const auto s = make_scheme("mxfp8");
  const OwnedTensor x = tensor_from({448.0f, 500.0f, -0.001953125f, 1.0f}, 1, 4, DType::f32);
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(c.find("scales")->bytes[0] == 127);  // floor(log2 500) = 8, e = 0
  CHECK(c.find("codes")->bytes[1] == 0x7e);  // 500 saturates to 448
  const OwnedTensor y = decompressed(*s, c);
  CHECK(y.get(0, 0) == 448.0f);
  CHECK(y.get(0, 1) == 448.0f);
  CHECK(y.get(0, 2) == -0.001953125f);  // 2^-9: e4m3's smallest subnormal
}

TEST_CASE("mx: tiny amax clamps the scale to 2^-127", "[scheme][mx][edge]") {
  SECTION("amax 2^-120 in mxfp8: e = -128 clamps to -127 and the element is 2^7, exact") {
    const auto s = make_scheme("mxfp8");
    const OwnedTensor x = tensor_from({std::ldexp(1.0f, -120)}, 1, 1, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[0] == 0);
    CHECK(decompressed(*s, c).get(0, 0) == std::ldexp(1.0f, -120));
  }
  SECTION("amax 2^-140 in mxfp4: scale 2^-127, element 2^-13 rounds to 0") {
    const auto s = make_scheme("mxfp4");
    const OwnedTensor x = tensor_from({std::ldexp(1.0f, -140)}, 1, 1, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.find("scales")->bytes[0] == 0);
    CHECK(decompressed(*s, c).get(0, 0) == 0.0f);
  }
}

TEST_CASE("mx: the decoder written from the definitions agrees bit for bit", "[scheme][mx][oracle]") {
  for (const std::string name : {"mxfp4", "mxfp8"}) {
    for (const std::int64_t d : {64, 128, 40}) {
      CAPTURE(name, d);
      const auto s = make_scheme(name);
      const OwnedTensor x = random_tensor(DType::f32, 30, d, 500 + static_cast<std::uint64_t>(d));
      const Compressed c = s->compress(x.view(), TensorRole::value);
      OwnedTensor y(DType::f32, 30, d);
      s->decompress(c, y.mut());
      const std::int64_t blocks = (d + 31) / 32;
      std::size_t mismatches = 0;
      for (std::int64_t t = 0; t < 30; ++t) {
        for (std::int64_t ch = 0; ch < d; ++ch) {
          const int sc = c.find("scales")->bytes[static_cast<std::size_t>(t * blocks + ch / 32)];
          const float element = name == "mxfp4"
                                    ? e2m1_by_definition(mx_fp4_code(c, d, t, ch))
                                    : e4m3_by_definition(c.find("codes")->bytes[static_cast<std::size_t>(t * d + ch)]);
          const float want = element * std::pow(2.0f, static_cast<float>(sc - 127));
          if (rules::float_bits(want) != rules::float_bits(y.get(t, ch))) ++mismatches;
        }
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("mx: bytes per token-head at head_dim 64 and 128", "[scheme][mx]") {
  // mxfp4: D/2 code bytes + D/32 e8m0 scales; mxfp8: D + D/32.
  CHECK(make_scheme("mxfp4")->planned_bytes(1, 64, DType::f16, TensorRole::key) == 34);
  CHECK(make_scheme("mxfp4")->planned_bytes(1, 128, DType::f16, TensorRole::key) == 68);
  CHECK(make_scheme("mxfp8")->planned_bytes(1, 64, DType::f16, TensorRole::key) == 66);
  CHECK(make_scheme("mxfp8")->planned_bytes(1, 128, DType::f16, TensorRole::key) == 132);
  CHECK(make_scheme("mxfp4")->planned_bytes(5, 33, DType::f16, TensorRole::key) == 5 * (17 + 2));
}

TEST_CASE("mx: a stored 0xFF scale is refused as corrupt", "[scheme][mx][edge]") {
  const auto s = make_scheme("mxfp8");
  const OwnedTensor x = random_tensor(DType::f16, 2, 32, 8);
  Compressed c = s->compress(x.view(), TensorRole::key);
  c.parts[0].bytes[1] = 0xff;
  OwnedTensor y(DType::f16, 2, 32);
  CHECK_THROWS_AS(s->decompress(c, y.mut()), InputError);
}

// Golden digests: FNV-1a 64 over every part in part order (scales, codes) for splitmix64 data
// (test_dgq_support.hpp, amplitude 4) in f16, 37 tokens. Made by this implementation on
// 2026-12-02 and checked against the definition decoder above; reprint with
//   DGQ_PRINT_GOLDEN=1 build/tests/test_reference "[mx][golden]"
TEST_CASE("mx golden digests", "[scheme][mx][golden]") {
  check_golden_scheme_digests({
      {"mxfp4", 128, "cf12dc4c740bb150"},
      {"mxfp4", 64, "d931c0f51f704a44"},
      {"mxfp8", 128, "06af9c08744166d3"},
      {"mxfp8", 64, "3983cb896e80eb2c"},
  });
}

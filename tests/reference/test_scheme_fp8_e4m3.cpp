// fp8-e4m3: the converter against an independent table of all 256 codes, at every
// round-to-nearest-even midpoint, and (where the CUDA toolkit is installed) against
// __nv_cvt_float_to_fp8; then the per-tensor-scale scheme.
#include "test_scheme_support.hpp"

#include <algorithm>
#include <limits>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/errors.hpp"
#include "minifloat_definitions.hpp"

#ifdef DGQ_CUDA_FP_ORACLE  // tests/CMakeLists.txt: the toolkit's headers were found
#include <cuda_fp8.h>
#define DGQ_HAVE_CUDA_FP8_ORACLE 1
#endif

using namespace dgq;
using namespace dgq::test;

namespace {

// Positive finite codes in increasing value order: 0x00 .. 0x7e.
constexpr int kLargestPositive = 0x7e;

}  // namespace

TEST_CASE("e4m3 decodes all 256 codes as defined", "[scheme][fp8][edge]") {
  for (int c = 0; c < 256; ++c) {
    CAPTURE(c);
    const float expected = e4m3_by_definition(c);
    const float got = fp8::e4m3_to_float(static_cast<std::uint8_t>(c));
    if (std::isnan(expected)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(rules::float_bits(got) == rules::float_bits(expected));
    }
  }
  CHECK(fp8::e4m3_to_float(0x7e) == 448.0f);
  CHECK(fp8::e4m3_to_float(0x01) == std::ldexp(1.0f, -9));
}

TEST_CASE("e4m3 encodes every code's value back to that code", "[scheme][fp8]") {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;  // NaN
    CAPTURE(c);
    CHECK(fp8::float_to_e4m3(e4m3_by_definition(c)) == c);
  }
}

TEST_CASE("e4m3 rounds midpoints to even and their neighbours to nearest", "[scheme][fp8]") {
  for (int c = 0; c < kLargestPositive; ++c) {
    const float a = e4m3_by_definition(c), b = e4m3_by_definition(c + 1);
    const float mid = 0.5f * (a + b);  // exact: a and b are close in fp32 terms
    const int even = (c % 2 == 0) ? c : c + 1;
    for (const float sign : {1.0f, -1.0f}) {
      const int sign_bit = sign < 0 ? 0x80 : 0;
      CAPTURE(c, sign, mid);
      CHECK(fp8::float_to_e4m3(sign * mid) == (even | sign_bit));
      CHECK(fp8::float_to_e4m3(sign * std::nextafter(mid, 0.0f)) == (c | sign_bit));
      CHECK(fp8::float_to_e4m3(sign * std::nextafter(mid, 1000.0f)) == ((c + 1) | sign_bit));
    }
  }
}

TEST_CASE("e4m3 saturates to +-448 and keeps NaN", "[scheme][fp8][edge]") {
  for (const float x : {448.0f, 463.99f, 464.0f, 480.0f, 1e6f, 3.0e38f, std::numeric_limits<float>::infinity()}) {
    CAPTURE(x);
    CHECK(fp8::float_to_e4m3(x) == 0x7e);
    CHECK(fp8::float_to_e4m3(-x) == 0xfe);
  }
  CHECK((fp8::float_to_e4m3(std::numeric_limits<float>::quiet_NaN()) & 0x7f) == 0x7f);
  CHECK(fp8::float_to_e4m3(std::ldexp(1.0f, -10)) == 0x00);   // half the smallest subnormal: tie to 0
  CHECK(fp8::float_to_e4m3(-std::ldexp(1.0f, -10)) == 0x80);  // -0
  CHECK(fp8::float_to_e4m3(std::ldexp(1.0f, -130)) == 0x00);  // fp32 subnormal
  CHECK(fp8::float_to_e4m3(std::ldexp(15.0f, -10)) == 0x08);  // 7.5 steps: tie to even 8 = 2^-6, the smallest normal
}

#ifdef DGQ_HAVE_CUDA_FP8_ORACLE
namespace {
std::uint8_t cuda_e4m3(float x) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}
}  // namespace

TEST_CASE("e4m3 matches cuda_fp8.h on every rounding class and a stride over all floats", "[scheme][fp8][oracle]") {
  std::uint64_t compared = 0, mismatches = 0;
  auto compare = [&](std::uint32_t bits) {
    const float x = rules::bits_float(bits);
    if (std::isnan(x)) return;
    ++compared;
    if (fp8::float_to_e4m3(x) != cuda_e4m3(x)) {
      if (++mismatches <= 5) {
        UNSCOPED_INFO("x = " << x << " (bits " << bits << "): dgq " << hex_byte(fp8::float_to_e4m3(x)) << ", cuda "
                             << hex_byte(cuda_e4m3(x)));
      }
    }
  };
  // The result depends on the exponent, the top 3 mantissa bits, the round bit (bit 19 for
  // normals) and whether any lower bit is set: every combination, both signs.
  for (std::uint32_t exponent = 0; exponent < 256; ++exponent) {
    for (std::uint32_t top = 0; top < 16; ++top) {
      for (const std::uint32_t low : {0u, 1u, 0x40000u, 0x7ffffu}) {
        for (std::uint32_t sign : {0u, 0x80000000u}) compare(sign | (exponent << 23) | (top << 19) | low);
      }
    }
  }
  // Below 2^-6 the round bit sits lower: sweep every float between 2^-12 and 2^-6 with a stride.
  for (std::uint32_t bits = 0x39800000u; bits < 0x3c800000u; bits += 97) compare(bits);
  // And a prime stride over the whole bit space.
  for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 65521) compare(static_cast<std::uint32_t>(bits));
  INFO("compared " << compared << " floats");
  CHECK(compared > 100000);
  CHECK(mismatches == 0);
}
#endif

TEST_CASE("fp8-e4m3 scheme: scale is amax/448 and the largest value encodes as 448", "[scheme][fp8]") {
  const auto s = make_scheme("fp8-e4m3");
  const OwnedTensor x = random_tensor(50, 64, 31);
  float amax = 0.0f;
  std::int64_t arg = 0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    if (std::fabs(x.at(i)) > amax) {
      amax = std::fabs(x.at(i));
      arg = i;
    }
  }
  const Compressed c = s->compress(x.view(), TensorRole::key);
  float scale;
  std::memcpy(&scale, c.find("scale")->bytes.data(), 4);
  CHECK(scale == amax / 448.0f);
  CHECK((c.find("codes")->bytes[static_cast<std::size_t>(arg)] & 0x7f) == 0x7e);
}

TEST_CASE("fp8-e4m3 scheme: all-zero tensor stores scale 0 and decodes to zeros", "[scheme][fp8][edge]") {
  const auto s = make_scheme("fp8-e4m3");
  const OwnedTensor x(DType::f16, 3, 33);
  const Compressed c = s->compress(x.view(), TensorRole::value);
  float scale;
  std::memcpy(&scale, c.find("scale")->bytes.data(), 4);
  CHECK(scale == 0.0f);
  CHECK(decompressed(*s, c).bytes == x.bytes);
}

TEST_CASE("fp8-e4m3 scheme round trip: 2^-4 relative, or half a subnormal step", "[scheme][fp8][roundtrip]") {
  const auto s = make_scheme("fp8-e4m3");
  for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
    for (const std::int64_t d : {1, 33, 128}) {
      OwnedTensor x = random_tensor(200, d, 40 + static_cast<std::uint64_t>(d), t);
      store_element(x.mut(), 0, 65504.0f);          // fp16 extreme sets the scale
      store_element(x.mut(), x.size() - 1, 6e-8f);  // fp16 subnormal
      const Compressed c = s->compress(x.view(), TensorRole::value);
      float scale;
      std::memcpy(&scale, c.find("scale")->bytes.data(), 4);
      const OwnedTensor y = decompressed(*s, c);
      for (std::int64_t i = 0; i < x.size(); ++i) {
        const float v = x.at(i), got = y.at(i);
        // e4m3 has 3 mantissa bits: half an ulp is 2^-4 of the value for normals, 2^-10*scale
        // (half the 2^-9 step) below 2^-6*scale; x/scale and code*scale add 2^-24 each.
        const float bound = std::max(std::ldexp(std::fabs(v), -4), std::ldexp(scale, -10)) +
                            std::ldexp(std::fabs(v), -22) + half_ulp(t, got);
        CAPTURE(dtype_name(t), d, i, v, got, scale);
        CHECK(std::fabs(got - v) <= bound);
      }
    }
  }
}

TEST_CASE("fp8-e4m3 scale key: canonical specs print it only when not default, prefix only with scale=prefix",
          "[scheme][fp8][registry]") {
  CHECK(make_scheme("fp8-e4m3")->spec() == "fp8-e4m3");
  CHECK(make_scheme("fp8-e4m3:scale=tensor,prefix=64")->spec() == "fp8-e4m3");
  CHECK(make_scheme("fp8-e4m3:scale=token,prefix=64")->spec() == "fp8-e4m3:scale=token");
  CHECK(make_scheme("fp8-e4m3:scale=prefix,prefix=128")->spec() == "fp8-e4m3:scale=prefix");
  CHECK(make_scheme("fp8-e4m3:prefix=16,scale=prefix")->spec() == "fp8-e4m3:scale=prefix,prefix=16");
  for (const std::string spec : {"fp8-e4m3:scale=token", "fp8-e4m3:scale=prefix,prefix=1"}) {
    CHECK(make_scheme(make_scheme(spec)->spec())->spec() == make_scheme(spec)->spec());
  }
  CHECK_THROWS_WITH(make_scheme("fp8-e4m3:scale=head"),
                    "fp8-e4m3: parameter 'scale' = 'head' is not one of tensor, token, prefix");
  CHECK_THROWS_AS(make_scheme("fp8-e4m3:scale=prefix,prefix=0"), ParameterError);
}

TEST_CASE("fp8-e4m3 scale=token: one amax/448 per token row, a zero row decodes to zeros", "[scheme][fp8]") {
  const auto s = make_scheme("fp8-e4m3:scale=token");
  OwnedTensor x = random_tensor(20, 33, 32);
  for (std::int64_t d = 0; d < x.channels; ++d) x.set(7, d, 0.0f);
  const Compressed c = s->compress(x.view(), TensorRole::key);
  REQUIRE(c.find("scale")->bytes.size() == 20 * 4);
  CHECK(c.total_bytes() == s->planned_bytes(20, 33, DType::f16, TensorRole::key));
  CHECK(c.total_bytes() == 20 * 33 + 20 * 4);
  const OwnedTensor y = decompressed(*s, c);
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    float amax = 0.0f;
    for (std::int64_t d = 0; d < x.channels; ++d) amax = std::max(amax, std::fabs(x.get(t, d)));
    float scale;
    std::memcpy(&scale, c.find("scale")->bytes.data() + 4 * t, 4);
    CAPTURE(t);
    CHECK(scale == amax / 448.0f);
    for (std::int64_t d = 0; d < x.channels; ++d) {
      const float v = x.get(t, d), got = y.get(t, d);
      const float bound = std::max(std::ldexp(std::fabs(v), -4), std::ldexp(scale, -10)) +
                          std::ldexp(std::fabs(v), -22) + half_ulp(DType::f16, got);
      CHECK(std::fabs(got - v) <= bound);
    }
  }
  for (std::int64_t d = 0; d < x.channels; ++d) CHECK(y.get(7, d) == 0.0f);
  // Rows are independent: a row's bytes do not depend on the others.
  const Compressed first = s->compress(ConstTensor{x.bytes.data(), x.dtype, 5, x.channels}, TensorRole::key);
  CHECK(
      std::equal(first.find("codes")->bytes.begin(), first.find("codes")->bytes.end(), c.find("codes")->bytes.begin()));
}

TEST_CASE("fp8-e4m3 scale=prefix: the scale of the first N tokens, later values saturate to 448*scale",
          "[scheme][fp8]") {
  const auto s = make_scheme("fp8-e4m3:scale=prefix,prefix=4");
  OwnedTensor x = random_tensor(10, 16, 33);
  x.set(8, 3, 1000.0f);  // far beyond the first four tokens' amax
  x.set(9, 5, -1000.0f);
  float amax = 0.0f;
  for (std::int64_t i = 0; i < 4 * x.channels; ++i) amax = std::max(amax, std::fabs(x.at(i)));
  const Compressed c = s->compress(x.view(), TensorRole::value);
  float scale;
  REQUIRE(c.find("scale")->bytes.size() == 4);
  std::memcpy(&scale, c.find("scale")->bytes.data(), 4);
  CHECK(scale == amax / 448.0f);
  CHECK(c.find("codes")->bytes[8 * 16 + 3] == 0x7e);
  CHECK(c.find("codes")->bytes[9 * 16 + 5] == 0xfe);
  const OwnedTensor y = decompressed(*s, c);
  CHECK(y.get(8, 3) == rules::half_to_float(rules::float_to_half(448.0f * scale)));
  // The first N tokens are coded exactly as a per-tensor scale over them codes them; with
  // L <= N the bytes are the per-tensor scheme's.
  const ConstTensor head{x.bytes.data(), x.dtype, 4, x.channels};
  CHECK(s->compress(head, TensorRole::value).parts == make_scheme("fp8-e4m3")->compress(head, TensorRole::value).parts);
  CHECK(std::equal(c.find("codes")->bytes.begin(), c.find("codes")->bytes.begin() + 4 * 16,
                   make_scheme("fp8-e4m3")->compress(head, TensorRole::value).find("codes")->bytes.begin()));
  // A prefix of zeros gives scale 0, with which every value decodes to 0.
  OwnedTensor zeros_first = random_tensor(10, 16, 34);
  for (std::int64_t i = 0; i < 4 * 16; ++i) store_element(zeros_first.mut(), i, 0.0f);
  const OwnedTensor z = decompressed(*s, s->compress(zeros_first.view(), TensorRole::key));
  for (std::int64_t i = 0; i < z.size(); ++i) CHECK(z.at(i) == 0.0f);
}

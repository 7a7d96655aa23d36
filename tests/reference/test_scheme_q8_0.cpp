// q8_0 against ggml's own bytes (tests/fixtures/oracles/ggml-q8_0, copied from
// ../shared/oracles so the tests run without it), plus the layout at partial blocks and
// the dequantization bound.
#include "test_scheme_support.hpp"

#include <fstream>
#include <iterator>

#include "dgq/baselines/q8_0.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

std::vector<std::uint8_t> read_q8_0_oracle(const std::string& name) {
  const std::string path = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/oracles/ggml-q8_0/" + name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr std::int64_t kOracleRows = 256, kOracleChannels = 128;

}  // namespace

TEST_CASE("q8_0 of an all-zero block is d = 0 and codes 0", "[scheme][q8_0][edge]") {
  const std::vector<float> zeros(32, 0.0f);
  q8_0::Block b;
  q8_0::quantize_block(zeros.data(), 32, b);
  CHECK(b.d == 0);
  for (const std::int8_t q : b.qs) CHECK(q == 0);
}

TEST_CASE("q8_0 pads a partial last block with code 0 and keeps 34 bytes per block", "[scheme][q8_0][edge]") {
  const auto s = make_scheme("q8_0");
  for (const std::int64_t d : {1, 31, 33, 65}) {
    CAPTURE(d);
    std::vector<float> v(static_cast<std::size_t>(2 * d), -3.0f);
    const OwnedTensor x = tensor_from(v, 2, d);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    const std::int64_t blocks = (d + 31) / 32;
    REQUIRE(c.part_bytes("blocks") == static_cast<std::uint64_t>(2 * blocks * 34));
    const std::vector<std::uint8_t>& bytes = c.find("blocks")->bytes;
    const std::int64_t used_in_last = d - (blocks - 1) * 32;
    for (std::int64_t t = 0; t < 2; ++t) {
      const std::uint8_t* last = bytes.data() + (t * blocks + blocks - 1) * 34;
      for (std::int64_t j = 0; j < 32; ++j) {
        CHECK(static_cast<std::int8_t>(last[2 + j]) == (j < used_in_last ? -127 : 0));
      }
    }
    // -127*fp16(3/127) is within 3*2^-12 of -3, less than half an fp16 ulp at 3 (2^-10).
    CHECK(decompressed(*s, c).bytes == x.bytes);
  }
}

TEST_CASE("q8_0 reproduces ggml's quantizer byte for byte", "[scheme][q8_0][oracle]") {
  const std::vector<std::uint8_t> f32 = read_q8_0_oracle("vectors.f32");
  const std::vector<std::uint8_t> expected = read_q8_0_oracle("vectors.q8_0");
  REQUIRE(f32.size() == static_cast<std::size_t>(kOracleRows * kOracleChannels * 4));
  REQUIRE(expected.size() == static_cast<std::size_t>(kOracleRows * 4 * 34));
  const ConstTensor x{f32.data(), DType::f32, kOracleRows, kOracleChannels};
  const Compressed c = make_scheme("q8_0")->compress(x, TensorRole::key);
  const std::vector<std::uint8_t>& got = c.find("blocks")->bytes;
  REQUIRE(got.size() == expected.size());
  std::size_t mismatches = 0, first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != expected[i]) {
      ++mismatches;
      first = std::min(first, i);
    }
  }
  INFO("first mismatch at byte " << first << " (row " << first / (4 * 34) << ", block " << (first / 34) % 4
                                 << ", offset " << first % 34 << ")");
  CHECK(mismatches == 0);
}

TEST_CASE("q8_0 dequantizes to q*d within half a step plus d's fp16 rounding", "[scheme][q8_0][roundtrip]") {
  const auto s = make_scheme("q8_0");
  for (const DType t : {DType::f16, DType::f32}) {
    const OwnedTensor x = random_tensor(300, 128, 21, t);
    const Compressed c = s->compress(x.view(), TensorRole::value);
    const OwnedTensor y = decompressed(*s, c);
    for (std::int64_t tok = 0; tok < x.tokens; ++tok) {
      for (std::int64_t b = 0; b < 4; ++b) {
        float amax = 0.0f;
        for (std::int64_t j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x.at(tok * 128 + b * 32 + j)));
        const float exact_step = amax / 127.0f;
        std::uint16_t d_bits;
        std::memcpy(&d_bits, c.find("blocks")->bytes.data() + (tok * 4 + b) * 34, 2);
        const float d = rules::half_to_float(d_bits);
        // |q*d - x| <= |q|*|d - amax/127| + |q*amax/127 - x|, |q| <= 127, the second term half a
        // step plus fp32 roundings of id and x*id.
        const float bound = 127.0f * std::fabs(d - exact_step) + 0.5f * exact_step + std::ldexp(amax, -20);
        for (std::int64_t j = 0; j < 32; ++j) {
          const std::int64_t i = tok * 128 + b * 32 + j;
          const float got = y.at(i);
          CAPTURE(dtype_name(t), tok, b, j, x.at(i), got, d);
          CHECK(std::fabs(got - x.at(i)) <= bound + half_ulp(t, got));
        }
      }
    }
  }
}

TEST_CASE("q8_0 handles fp16 extremes and subnormals", "[scheme][q8_0][edge]") {
  const auto s = make_scheme("q8_0");
  std::vector<float> v(64);
  for (int j = 0; j < 32; ++j) v[j] = (j % 2 ? 65504.0f : -65504.0f) * static_cast<float>(j) / 31.0f;
  for (int j = 32; j < 64; ++j) v[j] = std::ldexp(static_cast<float>(j - 48), -24);  // fp16 subnormals
  const OwnedTensor x = tensor_from(v, 1, 64);
  const OwnedTensor y = decompressed(*s, s->compress(x.view(), TensorRole::key));
  for (int j = 0; j < 32; ++j) {
    CAPTURE(j);
    CHECK(std::isfinite(y.at(j)));
    CHECK(std::fabs(y.at(j) - x.at(j)) <= 0.5f * 65504.0f / 127.0f + 127.0f * 0.25f + half_ulp(DType::f16, y.at(j)));
  }
  // d = fp16(65504/127) = 516 > 65504/127, so 127*d = 65532 would round to infinity in fp16;
  // decompress saturates it to 65504.
  CHECK(y.at(31) == 65504.0f);
  for (int j = 32; j < 64; ++j) {
    CAPTURE(j);
    // amax = 16 * 2^-24, d = fp16(amax/127) is a subnormal multiple of 2^-24: the codes
    // still order the values and the error stays below amax.
    CHECK(std::fabs(y.at(j) - x.at(j)) <= std::ldexp(16.0f, -24));
  }
}

// q4_0, q4_1, q5_0, q5_1, iq4_nl (and q8_0 on the same inputs) against ggml's own bytes and
// decoded floats (tests/fixtures/oracles/ggml-kv-types, copied from ../shared/oracles so the
// tests run without it; its README says how ggml made them), then the edges ggml never sees:
// zero blocks, partial blocks, scales that overflow fp16.
#include "test_scheme_support.hpp"

#include <fstream>
#include <iterator>

#include "dgq/baselines/ggml_kv_types.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

std::vector<std::uint8_t> read_kv_types_oracle(const std::string& name) {
  const std::string path = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/oracles/ggml-kv-types/" + name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr std::int64_t kRows = 256, kChannels = 128;

struct TypeCase {
  std::string name;
  int block_bytes;
};
const std::vector<TypeCase> kTypes{{"q4_0", 18}, {"q4_1", 20},   {"q5_0", 22},
                                   {"q5_1", 24}, {"iq4_nl", 18}, {"q8_0", 34}};

// Index of the first differing byte, or a.size() when equal (sizes are checked first).
std::size_t first_mismatch(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size();
}

std::vector<std::uint8_t> compress_blocks(const std::string& spec, ConstTensor x) {
  return make_scheme(spec)->compress(x, TensorRole::key).find("blocks")->bytes;
}

}  // namespace

TEST_CASE("ggml block schemes store 32-value blocks of ggml's sizes", "[scheme][ggml][layout]") {
  for (const TypeCase& type : kTypes) {
    CAPTURE(type.name);
    const auto s = make_scheme(type.name);
    CHECK(s->spec() == type.name);
    CHECK(s->family() == type.name);
    CHECK(s->planned_bytes(0, 128, DType::f16, TensorRole::key) == 0);
    CHECK(s->planned_bytes(3, 128, DType::f16, TensorRole::key) ==
          static_cast<std::uint64_t>(3 * 4 * type.block_bytes));
    CHECK(s->planned_bytes(3, 33, DType::f16, TensorRole::value) ==
          static_cast<std::uint64_t>(3 * 2 * type.block_bytes));
  }
}

TEST_CASE("ggml q4_0 of an all-zero block stores d = -0 and codes 8, as ggml's max/-8 does", "[scheme][ggml][edge]") {
  const std::vector<float> zeros(32, 0.0f);
  ggml::BlockQ4_0 b;
  REQUIRE(ggml::quantize_q4_0(zeros.data(), b));
  CHECK(b.d == 0x8000);
  for (const std::uint8_t q : b.qs) CHECK(q == 0x88);
  ggml::BlockQ5_0 b5;
  REQUIRE(ggml::quantize_q5_0(zeros.data(), b5));
  CHECK(b5.d == 0x8000);
  for (const std::uint8_t q : b5.qs) CHECK(q == 0x00);  // code 16: low bits 0, high bit set
  for (const std::uint8_t q : b5.qh) CHECK(q == 0xff);
}

TEST_CASE("ggml iq4_nl keeps the previous block's indices in a block below 1e-15", "[scheme][ggml][iq4_nl][edge]") {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16) / 8.0f;
  std::uint8_t carry[32] = {};
  ggml::BlockIQ4NL zero_first, nonzero, zero_after;
  const std::vector<float> zeros(32, 0.0f), tiny(32, 1e-16f);
  REQUIRE(ggml::quantize_iq4_nl(zeros.data(), zero_first, carry));
  CHECK(zero_first.d == 0);
  for (const std::uint8_t q : zero_first.qs) CHECK(q == 0);  // nothing carried yet
  REQUIRE(ggml::quantize_iq4_nl(x.data(), nonzero, carry));
  CHECK(nonzero.d != 0);
  REQUIRE(ggml::quantize_iq4_nl(tiny.data(), zero_after, carry));
  CHECK(zero_after.d == 0);
  CHECK(std::memcmp(zero_after.qs, nonzero.qs, 16) == 0);
  float out[32];
  ggml::dequantize_iq4_nl(zero_after, out);
  for (const float v : out) CHECK(v == 0.0f);
}

TEST_CASE("ggml block schemes zero-pad a partial last block and drop the padding on decode", "[scheme][ggml][edge]") {
  for (const TypeCase& type : kTypes) {
    const auto s = make_scheme(type.name);
    for (const std::int64_t d : {1, 31, 33, 65}) {
      CAPTURE(type.name, d);
      const OwnedTensor x = random_tensor(3, d, 7, DType::f32);
      const Compressed c = s->compress(x.view(), TensorRole::key);
      REQUIRE(c.total_bytes() == s->planned_bytes(3, d, DType::f32, TensorRole::key));
      // The same rows padded with zeros to whole blocks give the same bytes.
      const std::int64_t padded = (d + 31) / 32 * 32;
      std::vector<float> v(static_cast<std::size_t>(3 * padded), 0.0f);
      for (std::int64_t t = 0; t < 3; ++t) {
        for (std::int64_t j = 0; j < d; ++j) v[t * padded + j] = x.at(t * d + j);
      }
      const OwnedTensor xp = tensor_from(v, 3, padded, DType::f32);
      CHECK(c.find("blocks")->bytes == compress_blocks(type.name, xp.view()));
      const OwnedTensor y = decompressed(*s, c), yp = decompressed(*s, s->compress(xp.view(), TensorRole::key));
      for (std::int64_t t = 0; t < 3; ++t) {
        for (std::int64_t j = 0; j < d; ++j) CHECK(y.at(t * d + j) == yp.at(t * padded + j));
      }
    }
  }
}

TEST_CASE("ggml block schemes reject a block whose fp16 scale overflows, naming token and channels",
          "[scheme][ggml][edge]") {
  std::vector<float> v(64, 1.0f);
  v[40] = 1e7f;  // every d beyond 65504: q4_0 1.25e6, q5_1 (1e7-1)/31, iq4_nl ~1e7/127
  const OwnedTensor x = tensor_from(v, 1, 64, DType::f32);
  for (const std::string name : {"q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH(make_scheme(name)->compress(x.view(), TensorRole::key),
                      Catch::Contains(name + ": a block scale overflows fp16 at token 0, channels 32..63"));
  }
  std::vector<float> bad(64, 1.0f);
  bad[10] = std::nanf("");
  CHECK_THROWS_WITH(make_scheme("q4_0")->compress(tensor_from(bad, 1, 64, DType::f32).view(), TensorRole::key),
                    Catch::Contains("channel 10"));
}

TEST_CASE("ggml block schemes reproduce ggml's quantizer byte for byte", "[scheme][ggml][oracle]") {
  const std::vector<std::uint8_t> f32 = read_kv_types_oracle("vectors.f32");
  REQUIRE(f32.size() == static_cast<std::size_t>(kRows * kChannels * 4));
  const ConstTensor x{f32.data(), DType::f32, kRows, kChannels};
  for (const TypeCase& type : kTypes) {
    CAPTURE(type.name);
    const std::vector<std::uint8_t> expected = read_kv_types_oracle("vectors." + type.name);
    REQUIRE(expected.size() == static_cast<std::size_t>(kRows * 4 * type.block_bytes));
    const std::vector<std::uint8_t> got = compress_blocks(type.name, x);
    REQUIRE(got.size() == expected.size());
    const std::size_t first = first_mismatch(got, expected);
    INFO("first mismatch at byte " << first << " (row " << first / (4 * type.block_bytes) << ", block "
                                   << (first / type.block_bytes) % 4 << ", offset " << first % type.block_bytes << ")");
    CHECK(first == got.size());
  }
}

TEST_CASE("ggml block schemes decode ggml's bytes to ggml's floats bit for bit", "[scheme][ggml][oracle]") {
  for (const TypeCase& type : kTypes) {
    CAPTURE(type.name);
    const auto s = make_scheme(type.name);
    Compressed c;
    c.scheme = s->spec();
    c.tokens = kRows;
    c.channels = kChannels;
    c.dtype = DType::f32;
    c.parts.push_back({"blocks", read_kv_types_oracle("vectors." + type.name)});
    const std::vector<std::uint8_t> expected = read_kv_types_oracle("vectors." + type.name + ".dequant.f32");
    const OwnedTensor y = decompressed(*s, c);
    REQUIRE(y.bytes.size() == expected.size());
    const std::size_t first = first_mismatch(y.bytes, expected);
    INFO("first mismatch at float " << first / 4);
    CHECK(first == y.bytes.size());
  }
}

// dgq/kv_block_rules.hpp, the block decoding the CUDA decode attention reads through, against the
// schemes' own decompress: every value of every block bit for bit, for q8_0, q4_0 and iq4_nl,
// on rows that reach the codes' extremes (so both nibbles and the grid's ends are read), and
// DGQ v1's codes through dgq_value with each token's segment range, and dgq2's and KIVI's codes
// through uniform_code and uniform_value with each token's span range.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/kv_block_rules.hpp"
#include "dgq/scheme.hpp"

namespace {

// Rows whose spread changes at tokens 64 and 130 (several segments), an outlier at element
// `outlier` and an all-zero row 150: what the range-based decoders are checked on.
std::vector<float> regime_rows(std::int64_t tokens, std::int64_t channels, std::uint64_t seed, std::size_t outlier) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(tokens * channels));
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t c = 0; c < channels; ++c)
      x[static_cast<std::size_t>(t * channels + c)] = (t < 64 ? 0.3f : t < 130 ? 6.0f : 1.0f) * normal(rng);
  x[outlier] = 300.0f;
  for (std::int64_t c = 0; c < channels; ++c) x[static_cast<std::size_t>(150 * channels + c)] = 0.0f;
  return x;
}

}  // namespace

TEST_CASE("kv_block_rules decode every value as the scheme's decompress does", "[kv_block_rules]") {
  using F = dgq::StoredFormat;
  for (const auto& [format, spec] :
       {std::pair{F::q8_0, "q8_0"}, std::pair{F::q4_0, "q4_0"}, std::pair{F::iq4_nl, "iq4_nl"}}) {
    INFO(spec);
    const std::int64_t tokens = 9, channels = 96;
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(static_cast<std::size_t>(tokens * channels));
    for (float& v : x) v = normal(rng);
    x[5] = 1000.0f;  // a block whose scale is set by one outlier
    x[100] = -0.0f;
    for (std::int64_t c = 0; c < channels; ++c)
      x[static_cast<std::size_t>(8 * channels + c)] = 0.0f;  // an all-zero row
    const auto scheme = dgq::make_scheme(spec);
    const dgq::Compressed stored =
        scheme->compress(dgq::ConstTensor{x.data(), dgq::DType::f32, tokens, channels}, dgq::TensorRole::key);
    std::vector<float> expected(x.size());
    scheme->decompress(stored, dgq::MutTensor{expected.data(), dgq::DType::f32, tokens, channels});
    const dgq::Part* blocks = stored.find("blocks");
    REQUIRE(blocks != nullptr);
    const int bytes = dgq::kv_block_rules::block_bytes(format);
    REQUIRE(blocks->bytes.size() == x.size() / 32 * static_cast<std::size_t>(bytes));
    std::vector<float> got(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      got[i] =
          dgq::kv_block_rules::block_value(format, blocks->bytes.data() + (i / 32) * bytes, static_cast<int>(i % 32));
    CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("kv_block_rules' dgq_value decodes DGQ v1's codes as the scheme's decompress does", "[kv_block_rules]") {
  // Rows whose spread changes (several segments), an outlier, an all-zero row; every marker mode
  // (in-band markers are unmarked by the rule), both granularities (a range per segment, or per
  // segment and channel), fp16 (rounded) and fp32 input.
  const std::int64_t tokens = 200, channels = 64;
  const std::vector<float> x = regime_rows(tokens, channels, 11, 7);
  for (const char* markers : {"table", "bitmap", "inband"}) {
    for (const dgq::DType dtype : {dgq::DType::f16, dgq::DType::f32}) {
      for (const char* granularity : {"segment", "segment-channel"}) {
        const std::string spec = std::string("dgq:markers=") + markers + ",granularity=" + granularity;
        CAPTURE(spec, dgq::dtype_name(dtype));
        const auto scheme = dgq::make_scheme(spec);
        std::vector<std::uint8_t> input(x.size() * dgq::dtype_size(dtype));
        dgq::from_float(x.data(), dgq::MutTensor{input.data(), dtype, tokens, channels});
        const dgq::Compressed stored =
            scheme->compress(dgq::ConstTensor{input.data(), dtype, tokens, channels}, dgq::TensorRole::key);
        std::vector<std::uint8_t> decoded(input.size());
        scheme->decompress(stored, dgq::MutTensor{decoded.data(), dtype, tokens, channels});
        const std::vector<float> expected = dgq::to_float(dgq::ConstTensor{decoded.data(), dtype, tokens, channels});
        const std::uint8_t* codes = nullptr;
        const dgq::cpu::SpanRanges r = dgq::cpu::dgq_segment_ranges(stored, &codes);
        REQUIRE(r.edges.size() >= 3);  // at least two segments
        std::vector<float> got(x.size());
        const auto per_channel = static_cast<std::size_t>(r.channels == 1 ? 0 : 1);
        for (std::size_t s = 0; s + 1 < r.edges.size(); ++s)
          for (std::size_t i = r.edges[s] * channels; i < r.edges[s + 1] * channels; ++i) {
            const std::size_t range = s * static_cast<std::size_t>(r.channels) + per_channel * (i % channels);
            got[i] = dgq::kv_block_rules::dgq_value(codes[i], r.lo[range], r.scale[range], r.f16);
          }
        CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("kv_block_rules' uniform_code and uniform_value decode dgq2's and KIVI's codes as their decompress does",
          "[kv_block_rules]") {
  // Every code width (2, 3 with codes across bytes, 4, 8), per-channel and per-token ranges,
  // segments and groups, fp16 and fp32 ranges, fp16 (rounded) and fp32 input; an outlier and an
  // all-zero row, and spreads that change (several segments).
  const std::int64_t tokens = 192, channels = 64;
  const std::vector<float> x = regime_rows(tokens, channels, 13, 9);
  for (const char* spec : {"dgq2:kbits=3,vbits=2", "dgq2:bits=4,kgran=segment-channel-group,kgroup=32,vgran=segment",
                           "dgq2:bits=8,range_dtype=fp32,vgran=segment-channel", "kivi-4:group=32,residual=0",
                           "kivi-2:group=16,residual=0"}) {
    for (const dgq::TensorRole role : {dgq::TensorRole::key, dgq::TensorRole::value}) {
      for (const dgq::DType dtype : {dgq::DType::f16, dgq::DType::f32}) {
        CAPTURE(spec, role == dgq::TensorRole::key, dgq::dtype_name(dtype));
        const auto scheme = dgq::make_scheme(spec);
        std::vector<std::uint8_t> input(x.size() * dgq::dtype_size(dtype));
        dgq::from_float(x.data(), dgq::MutTensor{input.data(), dtype, tokens, channels});
        const dgq::Compressed stored = scheme->compress(dgq::ConstTensor{input.data(), dtype, tokens, channels}, role);
        std::vector<std::uint8_t> decoded(input.size());
        scheme->decompress(stored, dgq::MutTensor{decoded.data(), dtype, tokens, channels});
        const std::vector<float> expected = dgq::to_float(dgq::ConstTensor{decoded.data(), dtype, tokens, channels});
        const dgq::cpu::StoredHead head = dgq::cpu::packed_codes_head(stored);
        const auto& r = head.ranges;
        const int bits = dgq::kv_block_rules::uniform_bits(static_cast<dgq::StoredFormat>(head.format));
        const std::size_t row_bytes = static_cast<std::size_t>(channels) * static_cast<std::size_t>(bits) / 8;
        std::vector<float> got(x.size());
        for (std::size_t s = 0; s + 1 < r.edges.size(); ++s)
          for (std::size_t t = r.edges[s]; t < r.edges[s + 1]; ++t)
            for (std::size_t c = 0; c < static_cast<std::size_t>(channels); ++c) {
              const std::size_t range = s * static_cast<std::size_t>(r.channels) + (r.channels == 1 ? 0 : c);
              const std::uint8_t code =
                  dgq::kv_block_rules::uniform_code(head.codes + t * row_bytes, static_cast<int>(c), bits);
              got[t * static_cast<std::size_t>(channels) + c] =
                  dgq::kv_block_rules::uniform_value(code, r.lo[range], r.scale[range], r.f16);
            }
        CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0);
      }
    }
  }
}

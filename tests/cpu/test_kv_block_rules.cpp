// dgq/kv_block_rules.hpp, the block decoding the CUDA decode attention reads through, against the
// schemes' own decompress: every value of every block bit for bit, for q8_0, q4_0 and iq4_nl,
// on rows that reach the codes' extremes (so both nibbles and the grid's ends are read).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dgq/kv_block_rules.hpp"
#include "dgq/scheme.hpp"

TEST_CASE("kv_block_rules decode every value as the scheme's decompress does", "[kv_block_rules]") {
  using F = dgq::kv_block_rules::Format;
  for (const auto& [format, spec] : {std::pair{F::q8_0, "q8_0"}, std::pair{F::q4_0, "q4_0"}, std::pair{F::iq4_nl, "iq4_nl"}}) {
    INFO(spec);
    const std::int64_t tokens = 9, channels = 96;
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(static_cast<std::size_t>(tokens * channels));
    for (float& v : x) v = normal(rng);
    x[5] = 1000.0f;   // a block whose scale is set by one outlier
    x[100] = -0.0f;
    for (std::int64_t c = 0; c < channels; ++c) x[static_cast<std::size_t>(8 * channels + c)] = 0.0f;  // an all-zero row
    const auto scheme = dgq::make_scheme(spec);
    const dgq::Compressed stored = scheme->compress(dgq::ConstTensor{x.data(), dgq::DType::f32, tokens, channels},
                                                    dgq::TensorRole::key);
    std::vector<float> expected(x.size());
    scheme->decompress(stored, dgq::MutTensor{expected.data(), dgq::DType::f32, tokens, channels});
    const dgq::Part* blocks = stored.find("blocks");
    REQUIRE(blocks != nullptr);
    const int bytes = dgq::kv_block_rules::block_bytes(format);
    REQUIRE(blocks->bytes.size() == x.size() / 32 * static_cast<std::size_t>(bytes));
    std::vector<float> got(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      got[i] = dgq::kv_block_rules::block_value(format, blocks->bytes.data() + (i / 32) * bytes, static_cast<int>(i % 32));
    CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0);
  }
}

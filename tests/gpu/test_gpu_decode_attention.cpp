// The CUDA decode attention (dgq/cuda/decode_attention.hpp) against the CPU kernel's scalar path
// (dgq/cpu/decode_attention.hpp), bytes compared: the same stored q8_0 / q4_0 / iq4_nl blocks
// (made by the schemes), the same queries. Shapes: one token; token counts around the 256-token
// chunk (255, 257) and several chunks; GQA groups 1 and 4; head_dim 64, 128, 256. Not yet run on
// a GPU (docs/cuda.md).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cuda/decode_attention.hpp"
#include "dgq/scheme.hpp"
#include "test_seed.hpp"

namespace {

struct Case {
  dgq::kv_block_rules::Format format;
  int kv_heads, group, head_dim;
  std::int64_t tokens;
};

const char* spec_of(dgq::kv_block_rules::Format f) {
  return f == dgq::kv_block_rules::Format::q8_0 ? "q8_0" : f == dgq::kv_block_rules::Format::q4_0 ? "q4_0" : "iq4_nl";
}

std::vector<float> gaussian(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

}  // namespace

TEST_CASE("gpu: decode attention on stored blocks equals the CPU kernel's bytes", "[gpu][decode_attention]") {
  using F = dgq::kv_block_rules::Format;
  const std::vector<Case> cases = {
      {F::q8_0, 1, 1, 64, 1},     {F::q4_0, 2, 4, 64, 255},    {F::iq4_nl, 2, 4, 128, 257},
      {F::q8_0, 8, 4, 128, 1000}, {F::q4_0, 1, 1, 256, 700},   {F::iq4_nl, 1, 4, 256, 513},
  };
  for (const Case& c : cases) {
    const std::string where = std::string(spec_of(c.format)) + " kv_heads " + std::to_string(c.kv_heads) + " group " +
                              std::to_string(c.group) + " head_dim " + std::to_string(c.head_dim) + " tokens " +
                              std::to_string(c.tokens);
    INFO(where);
    const auto scheme = dgq::make_scheme(spec_of(c.format));
    std::vector<dgq::Compressed> k, v;
    dgq::cpu::StoredKv cpu_cache;
    cpu_cache.format = static_cast<dgq::cpu::KvBlockFormat>(c.format);
    dgq::cuda::DecodeAttentionInput in;
    in.format = c.format;
    in.kv_heads = c.kv_heads;
    in.group = c.group;
    in.head_dim = c.head_dim;
    in.tokens = c.tokens;
    for (int h = 0; h < c.kv_heads; ++h) {
      const auto values = static_cast<std::size_t>(c.tokens * c.head_dim);
      const std::vector<float> kx = gaussian(values, dgq::test::seed() + 2 * h), vx = gaussian(values, dgq::test::seed() + 2 * h + 1);
      k.push_back(scheme->compress(dgq::ConstTensor{kx.data(), dgq::DType::f32, c.tokens, c.head_dim}, dgq::TensorRole::key));
      v.push_back(scheme->compress(dgq::ConstTensor{vx.data(), dgq::DType::f32, c.tokens, c.head_dim}, dgq::TensorRole::value));
    }
    for (int h = 0; h < c.kv_heads; ++h) {
      REQUIRE(k[h].find("blocks") != nullptr);
      cpu_cache.k.push_back(k[h].find("blocks")->bytes.data());
      cpu_cache.v.push_back(v[h].find("blocks")->bytes.data());
    }
    in.k = cpu_cache.k;
    in.v = cpu_cache.v;
    const std::vector<float> q = gaussian(static_cast<std::size_t>(c.kv_heads * c.group * c.head_dim), dgq::test::seed() + 99);
    in.q = q.data();
    in.scale = 1.0f / 8.0f;
    const dgq::cpu::DecodeAttentionShape shape{c.kv_heads, c.group, c.head_dim, c.tokens};
    std::vector<float> cpu_out(q.size()), gpu_out(q.size(), -1.0f);
    dgq::cpu::decode_attention(cpu_cache, shape, q.data(), in.scale, cpu_out.data(), 1, dgq::cpu::DecodePath::scalar);
    dgq::cuda::decode_attention(in, gpu_out.data());
    REQUIRE(std::memcmp(cpu_out.data(), gpu_out.data(), cpu_out.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("gpu: decode attention refuses shapes it does not take", "[gpu][decode_attention][errors]") {
  dgq::cuda::DecodeAttentionInput in;
  in.head_dim = 512;
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(in, nullptr), Catch::Contains("head_dim must be a multiple of 32 in [32, 256]"));
}

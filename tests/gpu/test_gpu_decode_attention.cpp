// The CUDA decode attention (dgq/cuda/decode_attention.hpp) against the CPU kernel's scalar path
// (dgq/cpu/decode_attention.hpp), bytes compared: the same stored q8_0 / q4_0 / iq4_nl blocks
// (made by the schemes), the same queries. Shapes: one token; token counts around the 256-token
// chunk (255, 257) and several chunks; GQA groups 1 and 4; head_dim 64, 128, 256; and DGQ v1's
// codes (format dgq) with several segments, fp16 and fp32 input, markers in a table and in-band;
// dgq2's and KIVI's uniform codes (K and V of different widths, per-channel and per-token
// ranges, dgq2 with the Hadamard rotation on V or on both roles). Passed on a GPU
// (docs/gpu-results.md names the device and the commits; docs/cuda.md the changes since).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/cuda/decode_attention.hpp"
#include "dgq/scheme.hpp"
#include "test_seed.hpp"

namespace {

struct Case {
  dgq::StoredFormat format;
  int kv_heads, group, head_dim;
  std::int64_t tokens;
};

const char* spec_of(dgq::StoredFormat f) {
  return f == dgq::StoredFormat::q8_0 ? "q8_0" : f == dgq::StoredFormat::q4_0 ? "q4_0" : "iq4_nl";
}

std::vector<float> gaussian(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// Rows whose spread changes every 90 tokens: DGQ v1 finds several segments.
std::vector<float> regimes(std::int64_t tokens, int head_dim, std::uint64_t seed) {
  std::vector<float> x = gaussian(static_cast<std::size_t>(tokens * head_dim), seed);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (int d = 0; d < head_dim; ++d) x[static_cast<std::size_t>(t * head_dim + d)] *= (t / 90) % 2 ? 6.0f : 0.5f;
  return x;
}

// The query, then the CPU kernel's scalar path and the CUDA kernel on the same stored cache
// (in's shape and ranges set, its K/V pointers taken from cpu_cache): the same output bytes.
void require_gpu_equals_cpu(const dgq::cpu::StoredKv& cpu_cache, dgq::cuda::DecodeAttentionInput& in,
                            std::uint64_t seed) {
  in.k = cpu_cache.k;
  in.v = cpu_cache.v;
  const std::vector<float> q = gaussian(static_cast<std::size_t>(in.kv_heads * in.group * in.head_dim), seed);
  in.q = q.data();
  in.scale = 0.125f;
  const dgq::cpu::DecodeAttentionShape shape{in.kv_heads, in.group, in.head_dim, in.tokens};
  std::vector<float> cpu_out(q.size()), gpu_out(q.size(), -1.0f);
  dgq::cpu::decode_attention(cpu_cache, shape, q.data(), in.scale, cpu_out.data(), 1, dgq::cpu::DecodePath::scalar);
  dgq::cuda::decode_attention(in, gpu_out.data());
  REQUIRE(std::memcmp(cpu_out.data(), gpu_out.data(), cpu_out.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("gpu: decode attention on stored blocks equals the CPU kernel's bytes", "[gpu][decode_attention]") {
  using F = dgq::StoredFormat;
  const std::vector<Case> cases = {
      {F::q8_0, 1, 1, 64, 1},     {F::q4_0, 2, 4, 64, 255},  {F::iq4_nl, 2, 4, 128, 257},
      {F::q8_0, 8, 4, 128, 1000}, {F::q4_0, 1, 1, 256, 700}, {F::iq4_nl, 1, 4, 256, 513},
  };
  for (const Case& c : cases) {
    const std::string where = std::string(spec_of(c.format)) + " kv_heads " + std::to_string(c.kv_heads) + " group " +
                              std::to_string(c.group) + " head_dim " + std::to_string(c.head_dim) + " tokens " +
                              std::to_string(c.tokens);
    INFO(where);
    const auto scheme = dgq::make_scheme(spec_of(c.format));
    std::vector<dgq::Compressed> k, v;
    dgq::cpu::StoredKv cpu_cache;
    cpu_cache.format = c.format;
    dgq::cuda::DecodeAttentionInput in;
    in.format = c.format;
    in.kv_heads = c.kv_heads;
    in.group = c.group;
    in.head_dim = c.head_dim;
    in.tokens = c.tokens;
    for (int h = 0; h < c.kv_heads; ++h) {
      const auto values = static_cast<std::size_t>(c.tokens * c.head_dim);
      const std::vector<float> kx = gaussian(values, dgq::test::seed() + 2 * h),
                               vx = gaussian(values, dgq::test::seed() + 2 * h + 1);
      k.push_back(
          scheme->compress(dgq::ConstTensor{kx.data(), dgq::DType::f32, c.tokens, c.head_dim}, dgq::TensorRole::key));
      v.push_back(
          scheme->compress(dgq::ConstTensor{vx.data(), dgq::DType::f32, c.tokens, c.head_dim}, dgq::TensorRole::value));
    }
    for (int h = 0; h < c.kv_heads; ++h) {
      REQUIRE(k[h].find("blocks") != nullptr);
      cpu_cache.k.push_back(k[h].find("blocks")->bytes.data());
      cpu_cache.v.push_back(v[h].find("blocks")->bytes.data());
    }
    require_gpu_equals_cpu(cpu_cache, in, dgq::test::seed() + 99);
  }
}

TEST_CASE("gpu: decode attention on DGQ v1's codes equals the CPU kernel's bytes", "[gpu][decode_attention]") {
  struct DgqCase {
    const char* spec;
    dgq::DType dtype;
    int kv_heads, group, head_dim;
    std::int64_t tokens;
  };
  for (const DgqCase& c :
       {DgqCase{"dgq", dgq::DType::f16, 2, 4, 64, 257}, DgqCase{"dgq:markers=inband", dgq::DType::f16, 1, 1, 128, 700},
        DgqCase{"dgq:markers=bitmap", dgq::DType::f32, 2, 4, 128, 513}}) {
    INFO(std::string(c.spec) + " " + std::string(dgq::dtype_name(c.dtype)) + " tokens " + std::to_string(c.tokens));
    const auto scheme = dgq::make_scheme(c.spec);
    std::vector<dgq::Compressed> stored;
    for (int h = 0; h < 2 * c.kv_heads; ++h) {  // K heads, then V heads
      const std::vector<float> x = regimes(c.tokens, c.head_dim, dgq::test::seed() + 10 + h);
      std::vector<std::uint8_t> input(x.size() * dgq::dtype_size(c.dtype));
      dgq::from_float(x.data(), dgq::MutTensor{input.data(), c.dtype, c.tokens, c.head_dim});
      stored.push_back(scheme->compress(dgq::ConstTensor{input.data(), c.dtype, c.tokens, c.head_dim},
                                        h < c.kv_heads ? dgq::TensorRole::key : dgq::TensorRole::value));
    }
    std::vector<dgq::cpu::SpanRanges> ranges(stored.size());
    dgq::cpu::StoredKv cpu_cache;
    cpu_cache.format = dgq::StoredFormat::dgq;
    dgq::cuda::DecodeAttentionInput in;
    in.format = dgq::StoredFormat::dgq;
    in.kv_heads = c.kv_heads;
    in.group = c.group;
    in.head_dim = c.head_dim;
    in.tokens = c.tokens;
    for (std::size_t h = 0; h < stored.size(); ++h) {
      const std::uint8_t* codes = nullptr;
      ranges[h] = dgq::cpu::dgq_segment_ranges(stored[h], &codes);
      REQUIRE(ranges[h].edges.size() >= 3);  // several segments
      const bool key = h < static_cast<std::size_t>(c.kv_heads);
      (key ? cpu_cache.k : cpu_cache.v).push_back(codes);
      (key ? cpu_cache.k_ranges : cpu_cache.v_ranges).push_back(&ranges[h]);
      (key ? in.k_segments : in.v_segments).push_back({ranges[h].edges, ranges[h].lo, ranges[h].scale});
      in.dgq_f16 = ranges[h].f16;
    }
    require_gpu_equals_cpu(cpu_cache, in, dgq::test::seed() + 98);
  }
}

TEST_CASE("gpu: decode attention on dgq2's and KIVI's codes equals the CPU kernel's bytes", "[gpu][decode_attention]") {
  struct UniformCase {
    const char* spec;
    int kv_heads, group, head_dim;
    std::int64_t tokens;
  };
  for (const UniformCase& c :
       {UniformCase{"dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128", 2, 4, 128, 513},
        UniformCase{"dgq2:bits=2,kgran=segment,vgran=segment-channel", 1, 1, 64, 257},
        UniformCase{"dgq2:bits=8,range_dtype=fp32", 1, 4, 256, 300},
        UniformCase{"kivi-4:group=32,residual=0", 2, 4, 128, 320},
        UniformCase{"kivi-2:group=32,residual=0", 1, 3, 64, 64},
        // dgq2's frontier configuration (V rotated) and both roles rotated.
        UniformCase{"dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v", 2, 4, 128,
                    300},
        UniformCase{"dgq2:bits=4,rot=hadamard", 1, 4, 256, 257}}) {
    INFO(std::string(c.spec) + " tokens " + std::to_string(c.tokens));
    const auto scheme = dgq::make_scheme(c.spec);
    std::vector<dgq::Compressed> stored;
    for (int h = 0; h < 2 * c.kv_heads; ++h) {  // K heads, then V heads, from fp16 input
      const std::vector<float> x = regimes(c.tokens, c.head_dim, dgq::test::seed() + 20 + h);
      std::vector<std::uint8_t> input(x.size() * 2);
      dgq::from_float(x.data(), dgq::MutTensor{input.data(), dgq::DType::f16, c.tokens, c.head_dim});
      stored.push_back(scheme->compress(dgq::ConstTensor{input.data(), dgq::DType::f16, c.tokens, c.head_dim},
                                        h < c.kv_heads ? dgq::TensorRole::key : dgq::TensorRole::value));
    }
    std::vector<dgq::cpu::StoredHead> heads;
    for (const auto& s : stored) {
      heads.push_back(dgq::cpu::packed_codes_head(s));
      REQUIRE(heads.back().raw_tokens == 0);  // the CUDA twin's input has no raw rows (docs/cuda.md)
    }
    dgq::cpu::StoredKv cpu_cache;
    cpu_cache.format = heads.front().format;
    if (heads.back().format != heads.front().format) cpu_cache.v_format = heads.back().format;
    cpu_cache.k_rotated = heads.front().rotated;
    cpu_cache.v_rotated = heads.back().rotated;
    dgq::cuda::DecodeAttentionInput in;
    in.k_rotated = cpu_cache.k_rotated;
    in.v_rotated = cpu_cache.v_rotated;
    in.format = cpu_cache.format;
    if (cpu_cache.v_format) in.v_format = *cpu_cache.v_format;
    in.kv_heads = c.kv_heads;
    in.group = c.group;
    in.head_dim = c.head_dim;
    in.tokens = c.tokens;
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const bool key = h < static_cast<std::size_t>(c.kv_heads);
      const auto& r = heads[h].ranges;
      (key ? cpu_cache.k : cpu_cache.v).push_back(heads[h].codes);
      (key ? cpu_cache.k_ranges : cpu_cache.v_ranges).push_back(&r);
      (key ? in.k_segments : in.v_segments).push_back({r.edges, r.lo, r.scale, r.channels});
      in.dgq_f16 = r.f16;
    }
    require_gpu_equals_cpu(cpu_cache, in, dgq::test::seed() + 97);
  }
}

TEST_CASE("gpu: decode attention refuses shapes it does not take", "[gpu][decode_attention][errors]") {
  dgq::cuda::DecodeAttentionInput in;
  in.head_dim = 512;
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(in, nullptr),
                    Catch::Contains("head_dim must be a multiple of 32 in [32, 256]"));
  // Format dgq without the segments of its heads, or with segments that do not cover the tokens.
  const std::vector<std::uint8_t> codes(64 * 10);
  const std::vector<float> q(64);
  dgq::cuda::DecodeAttentionInput dgq_in;
  dgq_in.format = dgq::StoredFormat::dgq;
  dgq_in.head_dim = 64;
  dgq_in.tokens = 10;
  dgq_in.k = dgq_in.v = {codes.data()};
  dgq_in.q = q.data();
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(dgq_in, nullptr),
                    Catch::Contains("need the segments of every K and V head"));
  dgq_in.k_segments = dgq_in.v_segments = {dgq::cuda::DgqSegments{{0, 4, 9}, {0.0f, 0.0f}, {1.0f, 1.0f}}};
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(dgq_in, nullptr), Catch::Contains("do not cover its 10 tokens"));
  // TurboQuant's codebook formats are the CPU kernel's only; K and V apart only between uniform widths.
  dgq_in.format = dgq::StoredFormat::codebook3;
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(dgq_in, nullptr), Catch::Contains("codebook formats"));
  dgq_in.format = dgq::StoredFormat::q4_0;
  dgq_in.v_format = dgq::StoredFormat::uniform4;
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(dgq_in, nullptr), Catch::Contains("only between uniform code widths"));
  dgq::cuda::DecodeAttentionInput rotated;
  rotated.head_dim = 96;
  rotated.k = rotated.v = {codes.data()};
  rotated.q = q.data();
  rotated.v_rotated = true;
  CHECK_THROWS_WITH(dgq::cuda::decode_attention(rotated, nullptr), Catch::Contains("needs head_dim a multiple of 64"));
}

// Decode attention on stored q8_0 / q4_0 / iq4_nl blocks, plain and rotated: formats, head_dims,
// token counts around the chunk edges, GQA groups, extreme values, refused shapes and caches, and
// the work items in any order (the checks: decode_attention_cases.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode_attention_cases.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace decode_test {

TEST_CASE("decode attention: one token, one head, every format and head_dim", "[decode_attention]") {
  for (auto f : kFormats)
    for (int D : {32, 64, 128, 256})
      for (bool rotated : {false, true}) {
        if (rotated && D % 64 != 0) continue;
        check_case({f, rotated, {1, 1, D, 1}}, dgq::test::seed() + static_cast<std::uint64_t>(D));
      }
}

TEST_CASE("decode attention: token counts around the chunk edges", "[decode_attention]") {
  const std::int64_t K = ar::kChunkTokens;
  for (auto f : kFormats)
    for (std::int64_t L : {std::int64_t{7}, K - 1, K, K + 1, 2 * K + 3})
      check_case({f, false, {2, 1, 64, L}}, dgq::test::seed() + static_cast<std::uint64_t>(L));
}

TEST_CASE("decode attention: GQA groups 1, 3 and 4, rotated and not", "[decode_attention]") {
  for (auto f : kFormats)
    for (int group : {1, 3, 4})
      for (bool rotated : {false, true})
        check_case({f, rotated, {2, group, 128, 300}}, dgq::test::seed() + static_cast<std::uint64_t>(group));
}

TEST_CASE("decode attention: head_dim 64, 128 and 256 over several chunks", "[decode_attention]") {
  for (auto f : kFormats)
    for (int D : {64, 128, 256})
      check_case({f, true, {1, 2, D, 600}}, dgq::test::seed() + 31u * static_cast<std::uint64_t>(D));
}

TEST_CASE("decode attention: constant rows and values near fp16's largest", "[decode_attention]") {
  for (auto f : kFormats) {
    check_case({f, false, {1, 4, 128, 520}, Values::constant_rows}, dgq::test::seed() + 11);
    check_case({f, false, {1, 2, 128, 520}, Values::large}, dgq::test::seed() + 12);
    check_case({f, true, {1, 2, 128, 300}, Values::large}, dgq::test::seed() + 13);
  }
}

// With every row equal the weights are exactly 1 (s - m = 0) and the output is that row: pins
// the softmax normalisation independently of the twin's copy of the order. Bound: acc sums at
// most kChunkTokens equal terms per chunk and merges once per chunk, l is exact, so the relative
// error is below (kChunkTokens + chunks + 1) u.
TEST_CASE("decode attention: equal rows give that row back", "[decode_attention]") {
  const std::int64_t L = 700;
  DecodeCase c{StoredFormat::q8_0, false, {1, 1, 64, L}, Values::constant_rows};
  const Problem p = make_problem(c, dgq::test::seed() + 21);
  const auto got = run_kernel(p, 2);
  const double relative = (static_cast<double>(ar::kChunkTokens) + 4) * 0x1p-24;
  for (int d = 0; d < 64; ++d) {
    const double row = p.v.decompressed[0][d];
    CAPTURE(d, row, got[d]);
    REQUIRE(std::fabs(got[d] - row) <= relative * std::fabs(row));
  }
}

TEST_CASE("decode attention: bad shapes and caches are refused", "[decode_attention]") {
  const std::vector<std::uint8_t> bytes(34 * 8, 0);
  dgq::cpu::StoredKv kv;
  kv.k = kv.v = {bytes.data()};
  const float q[256] = {};
  float out[256];
  const auto run = [&](DecodeAttentionShape s, int threads = 1) {
    dgq::cpu::decode_attention(kv, s, q, 1.0f, out, threads);
  };
  REQUIRE_NOTHROW(run({1, 1, 64, 2}));
  REQUIRE_THROWS_WITH(run({1, 1, 48, 2}), Catch::Contains("multiple of 32"));
  REQUIRE_THROWS_WITH(run({1, 1, 64, 0}), Catch::Contains("tokens >= 1"));
  REQUIRE_THROWS_WITH(run({2, 1, 64, 2}), Catch::Contains("1 K and 1 V heads, the shape 2"));
  REQUIRE_THROWS_WITH(run({1, 1, 64, 2}, 0), Catch::Contains("threads"));
  kv.k_rotated = true;
  REQUIRE_THROWS_WITH(run({1, 1, 96, 1}), Catch::Contains("multiple of 64"));
  kv.k_rotated = false;
  kv.v = {nullptr};
  REQUIRE_THROWS_WITH(run({1, 1, 64, 2}), Catch::Contains("KV head 0 has no data"));
}

// The plan's contract for a caller with its own threads (the ggml bench's OpenMP): chunk items
// and head merges in any order give the bytes of decode_attention().
TEST_CASE("decode attention: work items in reverse order give the same bytes", "[decode_attention]") {
  for (auto f : kFormats) {
    const DecodeCase c{f, true, {3, 2, 128, 3 * ar::kChunkTokens + 17}};
    const auto seed = dgq::test::seed() + 41;
    INFO(describe(c, seed));
    const Problem p = make_problem(c, seed);
    dgq::cpu::DecodeAttention step(p.stored, c.shape, p.scale);
    step.set_query(p.q.data());
    REQUIRE(step.chunk_items() == 3 * 4);
    for (std::int64_t i = step.chunk_items() - 1; i >= 0; --i) step.run_chunk(i);
    for (int h = c.shape.query_heads() - 1; h >= 0; --h) step.merge_head(h);
    const std::vector<float> got(step.output(), step.output() + p.q.size());
    REQUIRE(same_bytes(got, run_kernel(p, 1)));
  }
}

// DGQ v1 (format dgq): its int8 codes read with each token's segment range, rounded to fp16 in
// registers, bit for bit the twin on Scheme::decompress's fp16 output.

}  // namespace decode_test

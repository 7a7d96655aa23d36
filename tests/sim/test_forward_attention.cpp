// The forward pass's attention (sim/model/src/forward/attention.cpp): the blocked path (query blocks,
// key tiles, online softmax) against the row-exact one, which computes each row alone in key
// order; masks, GQA, a decoder's offset queries and a causal cache's view.
#include <omp.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "forward/forward_ops.hpp"

namespace fwd = dgq::sim::forward;

namespace {

// The relative bound of docs/eval.md ("Attention"): the largest |blocked - row_exact| over the
// largest |row_exact| of a case. Measured 2026-12-02 on these cases: at most 3e-7.
constexpr double kBlockedVsRowExact = 2e-6;

dgq::sim::ModelConfig attention_config() {
  dgq::sim::ModelConfig c;
  c.num_q_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  return c;
}

std::vector<float> normal_values(std::size_t count, float scale, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(count);
  for (float& v : x) v = normal(rng);
  return x;
}

struct AttentionCase {
  std::int64_t tokens = 0, keys = 0, first_position = 0, window = 0;
  bool causal_view = false;
};

struct AttentionData {
  std::vector<float> q, k, v;
  dgq::sim::CausalKv view;
};

AttentionData attention_data(const AttentionCase& t, const dgq::sim::ModelConfig& c) {
  const auto d = static_cast<std::size_t>(c.head_dim);
  AttentionData a;
  // Queries already scaled; a spread of 2 makes scores of a few units, so some rows are peaked.
  a.q = normal_values(static_cast<std::size_t>(c.num_q_heads * t.tokens) * d, 2.0f / 8.0f, 1);
  a.k = normal_values(static_cast<std::size_t>(c.num_kv_heads * t.keys) * d, 1.0f, 2);
  a.v = normal_values(static_cast<std::size_t>(c.num_kv_heads * t.keys) * d, 1.0f, 3);
  if (t.causal_view) {  // a KIVI-like schedule: 100-token groups close 20 tokens late
    a.view.raw_k = normal_values(a.k.size(), 1.0f, 4);
    a.view.raw_v = normal_values(a.v.size(), 1.0f, 5);
    for (std::int64_t g = 0; g < c.num_kv_heads; ++g)
      for (std::int64_t p = 0; p < t.keys; ++p) {
        const auto final_count = static_cast<std::uint32_t>(std::max<std::int64_t>(0, (p - 20) / 100 * 100));
        a.view.final_k.push_back(final_count);
        a.view.final_v.push_back(static_cast<std::uint32_t>(p + 1 >= 50 ? final_count : p + 1));
      }
  }
  return a;
}

fwd::RowMat run_attention(const AttentionCase& t, const dgq::sim::ModelConfig& c, const AttentionData& a,
                          dgq::sim::Arithmetic arithmetic) {
  const fwd::AttentionKeys keys{a.k.data(), a.v.data(), t.keys, t.causal_view ? &a.view : nullptr};
  return fwd::attention(a.q, t.tokens, t.first_position, keys, c, t.window, arithmetic);
}

double relative_gap(const fwd::RowMat& blocked, const fwd::RowMat& exact) {
  return (blocked - exact).cwiseAbs().maxCoeff() / exact.cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("blocked attention equals the row-exact one within the stated bound") {
  const dgq::sim::ModelConfig c = attention_config();
  const AttentionCase cases[] = {
      {1, 1, 0, 0, false},        // one token
      {70, 70, 0, 0, false},      // one partial query block, one partial key tile
      {600, 600, 0, 0, false},    // several blocks and tiles, the last partial
      {600, 600, 0, 100, false},  // a sliding window: tiles a row cannot see
      {600, 600, 0, 0, true},     // a causal cache's view: blocks cut where the split moves
      {70, 600, 530, 0, false},   // a decoder's micro-batch after 530 cached tokens
      {70, 600, 530, 300, true},
  };
  for (const AttentionCase& t : cases) {
    const AttentionData a = attention_data(t, c);
    const fwd::RowMat exact = run_attention(t, c, a, dgq::sim::Arithmetic::row_exact);
    const fwd::RowMat blocked = run_attention(t, c, a, dgq::sim::Arithmetic::blocked);
    INFO("tokens " << t.tokens << ", keys " << t.keys << ", window " << t.window << ", causal view " << t.causal_view);
    REQUIRE(blocked.rows() == t.tokens);
    REQUIRE(blocked.allFinite());
    CHECK(relative_gap(blocked, exact) <= kBlockedVsRowExact);
  }
}

TEST_CASE("blocked attention reads no key outside a row's window or causal mask") {
  const dgq::sim::ModelConfig c = attention_config();
  const AttentionCase t{300, 300, 0, 40, false};
  AttentionData a = attention_data(t, c);
  const fwd::RowMat before = run_attention(t, c, a, dgq::sim::Arithmetic::blocked);
  // Key 100 of every KV head is visible to rows 100..139 only: make it dominate their scores.
  for (std::int64_t g = 0; g < c.num_kv_heads; ++g)
    for (std::int64_t e = 0; e < c.head_dim; ++e)
      a.k[static_cast<std::size_t>((g * t.keys + 100) * c.head_dim + e)] *= 50.0f;
  const fwd::RowMat after = run_attention(t, c, a, dgq::sim::Arithmetic::blocked);
  CHECK(after.topRows(100) == before.topRows(100));        // rows before key 100: causal mask
  CHECK(after.bottomRows(160) == before.bottomRows(160));  // rows from 140 on: the window
  CHECK(after.middleRows(100, 40) != before.middleRows(100, 40));
}

TEST_CASE("blocked attention gives the same bits with 1 and 2 threads") {
  const dgq::sim::ModelConfig c = attention_config();
  const AttentionCase t{600, 600, 0, 0, true};
  const AttentionData a = attention_data(t, c);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const fwd::RowMat one = run_attention(t, c, a, dgq::sim::Arithmetic::blocked);
  omp_set_num_threads(2);
  const fwd::RowMat two = run_attention(t, c, a, dgq::sim::Arithmetic::blocked);
  omp_set_num_threads(threads);
  CHECK(one == two);
}

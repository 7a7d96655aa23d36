// Rules 2-5: block means, candidates, budget and selection, on rows built so that every token
// variance is known exactly: row t = [a_t, -a_t] has S = 0, S2 = 2 a_t^2, var = a_t^2.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "dgq/dgq.hpp"
#include "test_dgq_support.hpp"

namespace {

std::vector<float> rows_with_amplitudes(const std::vector<float>& a) {
  std::vector<float> x;
  for (float v : a) {
    x.push_back(v);
    x.push_back(-v);
  }
  return x;
}

dgq::DgqAnalysis analyze_amplitudes(const std::vector<float>& a, const dgq::DgqV1Params& p) {
  const std::vector<float> x = rows_with_amplitudes(a);
  return dgq::dgq_analyze(x.data(), static_cast<std::int64_t>(a.size()), 2, p);
}

// amplitude a_t = level of the block [start, end) it lies in.
std::vector<float> steps(std::int64_t tokens, const std::vector<std::pair<std::int64_t, float>>& starts) {
  std::vector<float> a(static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t)
    for (const auto& [start, level] : starts)
      if (t >= start) a[t] = level;
  return a;
}

}  // namespace

TEST_CASE("block means: sequential fp32 sum over the block, divided by its (partial) length", "[dgq][rule2]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  p.win = 2;
  auto a = analyze_amplitudes({1, 2, 3, 4, 5}, p);  // v = 1, 4, 9, 16, 25
  REQUIRE(a.block_mean == std::vector<float>{2.5f, 12.5f, 25.0f});
  // v = 1, 2^24, 1 in one block of 3: (1 + 2^24) rounds to 2^24, + 1 again to 2^24.
  // Any other order ((1 + 1) + 2^24 = 2^24 + 2) would give a different mean.
  p.win = 3;
  a = analyze_amplitudes({1, 4096, 1}, p);
  REQUIRE(a.block_mean == std::vector<float>{0x1p24f / 3.0f});
  REQUIRE(0x1p24f / 3.0f != (0x1p24f + 2.0f) / 3.0f);
}

TEST_CASE("candidates: r_b = min/max of neighbouring means; only r_b < group_ratio counts", "[dgq][rule3]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  p.win = 1;
  p.group_ratio = 0.5f;
  // v = 1, 4, 4, ~2, 0, 0: r = 0.25, 1, ~0.5, 0, 1 (both zero).
  const auto a = analyze_amplitudes({1, 2, 2, std::sqrt(2.0f), 0, 0}, p);
  REQUIRE(a.block_ratio.size() == 5);
  REQUIRE(a.block_ratio[0] == 0.25f);
  REQUIRE(a.block_ratio[1] == 1.0f);
  const float v3 = std::sqrt(2.0f) * std::sqrt(2.0f);  // 2 + 2^-22: r just above 0.5
  REQUIRE(a.block_ratio[2] == v3 / 4.0f);
  REQUIRE(a.block_ratio[3] == 0.0f);
  REQUIRE(a.block_ratio[4] == 1.0f);
  // L = 6 < 2048: budget 2, one edge: the smallest ratio (0, at b = 4).
  REQUIRE(a.budget == 2);
  REQUIRE(a.edges == std::vector<std::uint32_t>{4});
}

TEST_CASE("selection: equal ratios go to the smaller block index", "[dgq][rule5]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  p.win = 16;
  // Three levels 1, 2, 4 (v = 1, 4, 16): r = 0.25 at b = 2 and at b = 5; budget 2 -> b = 2 only.
  const auto a = analyze_amplitudes(steps(96, {{0, 1}, {32, 2}, {80, 4}}), p);
  REQUIRE(a.block_ratio[1] == 0.25f);
  REQUIRE(a.block_ratio[4] == 0.25f);
  REQUIRE(a.edges == std::vector<std::uint32_t>{32});
}

TEST_CASE("selection: the first budget-1 candidates by ratio, edges reported increasing", "[dgq][rule4][rule5]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  // L = 2048: budget 3. Steps at 160 (v 1 -> 16, r 1/16), 800 (16 -> 4, r 1/4), 1600 (4 -> 2, r 1/2).
  const auto a = analyze_amplitudes(steps(2048, {{0, 1}, {160, 4}, {800, 2}, {1600, std::sqrt(2.0f)}}), p);
  REQUIRE(a.budget == 3);
  REQUIRE(a.edges == std::vector<std::uint32_t>{160, 800});
  // One token fewer: budget 2, only the strongest step.
  const auto b = analyze_amplitudes(steps(2047, {{0, 1}, {160, 4}, {800, 2}, {1600, std::sqrt(2.0f)}}), p);
  REQUIRE(b.budget == 2);
  REQUIRE(b.edges == std::vector<std::uint32_t>{160});
}

TEST_CASE("selection: a step inside a block moves to a block edge next to it", "[dgq][rule3][rule5]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  // v = 1 for t < 40, 9 from 40 on, win 16: means 1, 1, 5 (block 32..47: 8 ones, 8 nines), 9.
  // r: b=1: 1, b=2: 0.2, b=3: 5/9. The edge is at 32.
  const auto a = analyze_amplitudes(steps(64, {{0, 1}, {40, 3}}), p);
  REQUIRE(a.block_mean == std::vector<float>{1.0f, 1.0f, 5.0f, 9.0f});
  REQUIRE(a.edges == std::vector<std::uint32_t>{32});
}

TEST_CASE("segments: none on flat data, none below 2*win tokens, none when max_groups = 1", "[dgq][rule4]") {
  dgq::DgqV1Params p;
  // Random data of one amplitude: variances within a few % of each other.
  const auto flat = dgq::test::random_tensor(dgq::DType::f32, 4096, 128, 11, 3.0f);
  const auto a = dgq::dgq_analyze(static_cast<const float*>(flat.view().data), 4096, 128, p);
  REQUIRE(a.budget == 3);
  REQUIRE(a.edges.empty());
  // A strong step, but L = 31 < 2*win.
  const auto short_a = analyze_amplitudes(steps(31, {{0, 1}, {16, 100}}), p);
  REQUIRE(short_a.budget == 1);
  REQUIRE(short_a.edges.empty());
  p.max_groups = 1;
  const auto capped = analyze_amplitudes(steps(64, {{0, 1}, {16, 100}}), p);
  REQUIRE(capped.edges.empty());
}

TEST_CASE("segments: variance steps on random data are found exactly at the step's block edge", "[dgq][rule5]") {
  // Amplitude 1 -> 8 at token 4096 -> 1 at 12288, L = 16384 (budget 5 with the default cap).
  auto amp = [](std::int64_t t) { return (t >= 4096 && t < 12288) ? 8.0f : 1.0f; };
  const auto x = dgq::test::random_tensor(dgq::DType::f16, 16384, 64, 5, amp);
  const auto xf = dgq::to_float(x.view());
  const auto a = dgq::dgq_analyze(xf.data(), 16384, 64, dgq::DgqV1Params{});
  REQUIRE(a.budget == 5);
  REQUIRE(a.edges == std::vector<std::uint32_t>{4096, 12288});
}

TEST_CASE("segments: the all-zero tensor is one segment (r = 1 when both means are 0)", "[dgq][rule3]") {
  dgq::DgqV1Params p;
  p.min_var = 0.0f;
  const std::vector<float> zeros(64 * 8, 0.0f);
  const auto a = dgq::dgq_analyze(zeros.data(), 64, 8, p);
  REQUIRE(a.block_ratio == std::vector<float>{1.0f, 1.0f, 1.0f});
  REQUIRE(a.edges.empty());
}

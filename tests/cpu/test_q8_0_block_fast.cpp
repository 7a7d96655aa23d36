// q8_0 full blocks go through an AVX2 quantizer when compiled in; it must give the bytes of
// the block rule written out (amax, d = fp16(amax/127), id = 127/amax, nearbyint(x*id)) for
// ties at .5, zeros of both signs, subnormals and the extremes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/cpu/kernels.hpp"
#include "dgq/element_rules.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace {

dgq::q8_0::Block rule_block(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  dgq::q8_0::Block b;
  b.d = dgq::rules::float_to_half(amax / 127.0f);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<std::int8_t>(std::nearbyint(x[j] * id));
  return b;
}

}  // namespace

TEST_CASE("q8_0 quantize_block: a full block equals the block rule, ties and extremes included", "[q8_0]") {
  dgq::test::SplitMix64 rng(dgq::test::seed());
  for (int trial = 0; trial < 4000; ++trial) {
    float x[32];
    for (int j = 0; j < 32; ++j) {
      switch ((trial + j) % 7) {
        case 0: x[j] = static_cast<float>(static_cast<int>(rng.next() % 254) - 127) + 0.5f; break;  // ties when id = 1
        case 1: x[j] = -0.0f; break;
        case 2: x[j] = std::numeric_limits<float>::denorm_min() * static_cast<float>(rng.next() % 5); break;
        default: x[j] = rng.symmetric(trial % 3 == 0 ? 127.0f : 1e-3f);
      }
    }
    if (trial % 2 == 0) x[trial % 32] = 127.0f;       // amax = 127: id = 1, the .5 values are exact ties
    if (trial % 5 == 0) std::memset(x, 0, sizeof x);  // all zero: id = 0
    if (trial % 11 == 0) x[3] = trial % 2 ? 65504.0f * 127.0f : -1e-30f;
    CAPTURE(trial);
    dgq::q8_0::Block fast;
    dgq::q8_0::quantize_block(x, 32, fast);
    const dgq::q8_0::Block rule = rule_block(x);
    REQUIRE(fast.d == rule.d);
    REQUIRE(std::memcmp(fast.qs, rule.qs, 32) == 0);
  }
}

// The row functions (one loop, no call per block) must give the bytes and values of the block
// functions called block after block, partial last blocks and overflowing/corrupt scales included.
TEST_CASE("q8_0 quantize_row_into / dequantize_row equal the block functions block after block", "[q8_0]") {
  dgq::test::SplitMix64 rng(dgq::test::seed());
  for (const std::int64_t n : {0, 1, 31, 32, 33, 64, 100, 128, 257}) {
    CAPTURE(n);
    const std::int64_t blocks = (n + 31) / 32;
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = rng.symmetric(n % 2 ? 3.0f : 1e-4f);
    if (n > 40) x[40] = 65504.0f * 200.0f;  // block 1's d overflows to inf
    std::vector<std::uint8_t> row(static_cast<std::size_t>(blocks * 34)), expected(row.size());
    bool finite = true;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const int count = static_cast<int>(std::min<std::int64_t>(32, n - b * 32));
      dgq::q8_0::Block block;
      dgq::q8_0::quantize_block(x.data() + b * 32, count, block);
      std::memcpy(expected.data() + b * 34, &block, 34);
      finite = finite && (block.d & 0x7fffu) != 0x7c00u;
    }
    using dgq::q8_0::RowStatus;
    REQUIRE(dgq::cpu::fast_kernels().q8_0_quantize_row(x.data(), n, row.data()) ==
            (finite ? RowStatus::ok : RowStatus::scale_overflow));
    REQUIRE(row == expected);
    // A NaN or Inf anywhere, in a full or a partial block, is reported before a scale overflow.
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      for (std::int64_t at = 0; at < n; at += 13) {
        std::vector<float> y = x;
        y[static_cast<std::size_t>(at)] = bad;
        CAPTURE(at, bad);
        REQUIRE(dgq::cpu::fast_kernels().q8_0_quantize_row(y.data(), n, row.data()) == RowStatus::non_finite_input);
      }
    }
    REQUIRE(dgq::cpu::fast_kernels().q8_0_quantize_row(x.data(), n, row.data()) ==
            (finite ? RowStatus::ok : RowStatus::scale_overflow));

    if (n > 64) std::memcpy(row.data() + 2 * 34, "\x00\x7e", 2);  // block 2's stored d is NaN
    std::vector<float> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
    bool want_finite = true;
    for (std::int64_t b = 0; b < blocks; ++b) {
      dgq::q8_0::Block block;
      std::memcpy(&block, row.data() + b * 34, 34);
      want_finite = want_finite && (block.d & 0x7c00u) != 0x7c00u;
      dgq::q8_0::dequantize_block(block, static_cast<int>(std::min<std::int64_t>(32, n - b * 32)),
                                  want.data() + b * 32);
    }
    REQUIRE(dgq::cpu::fast_kernels().q8_0_dequantize_row(row.data(), n, got.data()) == want_finite);
    REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
}

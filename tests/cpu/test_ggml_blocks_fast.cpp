// The fast paths of the new baselines against the rules written out literally: the AVX2 q4_0
// block against ggml's scalar loop, the branch-free iq4_nl grid search against ggml's binary
// search (whole blocks, ties at grid midpoints included), and the AVX2 Walsh-Hadamard
// transform against one butterfly at a time. All comparisons are of bits.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/cpu/kernels.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/fwht.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

using dgq::test::SplitMix64;

namespace {

// A block of 32 values of one of several adversarial kinds.
void adversarial_block(SplitMix64& rng, int trial, float* x) {
  const float scale = trial % 3 == 0 ? 100.0f : (trial % 3 == 1 ? 1e-3f : 1.0f);
  for (int j = 0; j < 32; ++j) {
    switch ((trial / 3 + j) % 8) {
      case 0: x[j] = static_cast<float>(static_cast<int>(rng.next() % 17) - 8) * 0.5f * scale; break;  // grid ties
      case 1: x[j] = (rng.next() & 1) ? -0.0f : 0.0f; break;
      case 2: x[j] = std::numeric_limits<float>::denorm_min() * static_cast<float>(rng.next() % 5); break;
      case 3: x[j] = (rng.next() & 1) ? scale : -scale; break;  // +-max ties: the first one wins
      default: x[j] = rng.symmetric(scale);
    }
  }
  if (trial % 11 == 0) std::memset(x, 0, 32 * sizeof(float));
  if (trial % 13 == 0) x[trial % 32] = -65504.0f;
}

// ggml-quants.c best_index_int8, verbatim in C++.
int ggml_best_index(int n, const std::int8_t* val, float x) {
  if (x <= val[0]) return 0;
  if (x >= val[n - 1]) return n - 1;
  int ml = 0, mu = n - 1;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < val[mav]) {
      mu = mav;
    } else {
      ml = mav;
    }
  }
  return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

// quantize_row_iq4_nl_impl(32, 32, ..., ntry = -1, no weights) for one block, as ggml runs it.
void ggml_iq4_nl_block(const float* x, dgq::ggml::BlockIQ4NL& b, std::uint8_t* L) {
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  float d = 0;
  if (amax >= 1e-15f) {
    d = max / dgq::ggml::kIQ4NLValues[0];
    const float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float al = id * x[j];
      const int l = ggml_best_index(16, dgq::ggml::kIQ4NLValues, al);
      L[j] = static_cast<std::uint8_t>(l);
      const float q = dgq::ggml::kIQ4NLValues[l];
      const float w = x[j] * x[j];
      sumqx += w * q * x[j];
      sumq2 += w * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  }
  b.d = dgq::rules::float_to_half(d);
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<std::uint8_t>(L[j] | (L[16 + j] << 4));
}

}  // namespace

TEST_CASE("q4_0 fast block equals ggml's scalar loop, ties, signed zeros and extremes included", "[ggml][fast]") {
  SplitMix64 rng(dgq::test::seed());
  for (int trial = 0; trial < 20000; ++trial) {
    float x[32];
    adversarial_block(rng, trial, x);
    dgq::ggml::BlockQ4_0 fast, rule;
    dgq::cpu::fast_kernels().quantize_q4_0(x, fast);
    dgq::ggml::quantize_q4_0_scalar(x, rule);
    CAPTURE(trial);
    REQUIRE(std::memcmp(&fast, &rule, sizeof fast) == 0);
  }
}

TEST_CASE("iq4_nl grid search equals ggml's binary search on whole blocks, midpoints included",
          "[ggml][iq4_nl][fast]") {
  SplitMix64 rng(dgq::test::seed() + 1);
  std::uint8_t carry[32] = {}, L[32] = {};
  for (int trial = 0; trial < 20000; ++trial) {
    float x[32];
    adversarial_block(rng, trial, x);
    if (trial % 5 == 0) {
      // Values whose x/d0 falls exactly on a midpoint of two grid values (d0 = -1 when max = 127).
      x[0] = 127.0f;
      for (int j = 1; j < 32; ++j) {
        const int k = static_cast<int>(rng.next() % 15);
        x[j] = -0.5f * static_cast<float>(dgq::ggml::kIQ4NLValues[k] + dgq::ggml::kIQ4NLValues[k + 1]);
      }
    }
    dgq::ggml::BlockIQ4NL got, want;
    dgq::cpu::fast_kernels().quantize_iq4_nl(x, got, carry);
    ggml_iq4_nl_block(x, want, L);
    CAPTURE(trial);
    REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
  }
}

TEST_CASE("fast Walsh-Hadamard transform equals the butterfly rule bit for bit", "[rotation][fast]") {
  SplitMix64 rng(dgq::test::seed() + 2);
  for (int n = 1; n <= 1024; n *= 2) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> a(static_cast<std::size_t>(n));
      for (float& e : a) e = trial % 2 ? rng.symmetric(1e4f) : static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
      std::vector<float> b = a, c = a;
      dgq::cpu::fast_kernels().fwht_in_place(a.data(), n);
      dgq::fwht_in_place_scalar(b.data(), n);
      CAPTURE(n, trial);
      REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
      // The scaled transform (register-resident for n = 64, 128) is the transform, then the scale.
      const float scale = dgq::rules::hadamard_scale(n);
      dgq::fwht_scaled_in_place(c.data(), n, scale);
      for (float& e : b) e *= scale;
      REQUIRE(std::memcmp(c.data(), b.data(), c.size() * sizeof(float)) == 0);
    }
  }
}

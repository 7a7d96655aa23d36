// The scalar rules shared with CUDA (dgq/element_rules.hpp), against independent references:
// conversions exhaustively or against slow double-precision rounding, the rest against
// hand-computed values from docs/spec.md.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "dgq/element_rules.hpp"

namespace {

using dgq::rules::bits_float;
using dgq::rules::float_bits;

// Value of a positive half bit pattern k in [0, 0x7c00], written from the IEEE definition
// (0x7c00 stands for 2^16, the first value past the largest finite half, for rounding).
double half_value(std::uint32_t k) {
  const std::uint32_t e = k >> 10, m = k & 0x3ffu;
  if (e == 0) return std::ldexp(static_cast<double>(m), -24);
  return std::ldexp(static_cast<double>(1024 + m), static_cast<int>(e) - 25);
}

// Slow reference: nearest half to f, ties to the even pattern, by binary search in double.
std::uint16_t reference_float_to_half(float f) {
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(f)) return sign | 0x7c00;
  std::uint32_t lo = 0, hi = 0x7c00;  // invariant: half_value(lo) <= a < half_value(hi) unless a >= 2^16
  if (a >= half_value(hi)) return sign | 0x7c00;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    (half_value(mid) <= a ? lo : hi) = mid;
  }
  const double below = a - half_value(lo), above = half_value(hi) - a;
  std::uint32_t k;
  if (below < above)
    k = lo;
  else if (above < below)
    k = hi;
  else
    k = (lo % 2 == 0) ? lo : hi;
  return static_cast<std::uint16_t>(sign | k);
}

std::uint16_t reference_float_to_bf16(float f) {
  const std::uint32_t bits = float_bits(f);
  const std::uint32_t sign = bits & 0x80000000u;
  const std::uint32_t k = (bits & 0x7fffffffu) >> 16;  // truncation toward zero
  const double a = std::fabs(static_cast<double>(f));
  const double down = std::fabs(static_cast<double>(bits_float(k << 16)));
  // k+1 may be the infinity pattern: its "value" for rounding is the next power of two.
  const double up = (k + 1) == 0x7f80u ? std::ldexp(1.0, 128) : static_cast<double>(bits_float((k + 1) << 16));
  std::uint32_t r;
  if (a - down < up - a)
    r = k;
  else if (up - a < a - down)
    r = k + 1;
  else
    r = (k % 2 == 0) ? k : k + 1;
  return static_cast<std::uint16_t>((sign >> 16) | r);
}

void check_half(float f) {
  INFO("f = " << f << " bits 0x" << std::hex << float_bits(f));
  REQUIRE(dgq::rules::float_to_half(f) == reference_float_to_half(f));
}

}  // namespace

TEST_CASE("half_to_float: every one of the 65536 halves has its IEEE value and round-trips", "[rules][rule0]") {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = dgq::rules::half_to_float(static_cast<std::uint16_t>(h));
    const std::uint32_t magnitude = h & 0x7fffu;
    INFO("half 0x" << std::hex << h);
    if (magnitude > 0x7c00u) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::signbit(f) == ((h & 0x8000u) != 0));
      REQUIRE((dgq::rules::float_to_half(f) & 0x7fffu) > 0x7c00u);
      continue;
    }
    const double expected = magnitude == 0x7c00u ? std::numeric_limits<double>::infinity() : half_value(magnitude);
    REQUIRE(static_cast<double>(std::fabs(f)) == expected);
    REQUIRE(std::signbit(f) == ((h & 0x8000u) != 0));
    REQUIRE(dgq::rules::float_to_half(f) == h);
  }
}

TEST_CASE("float_to_half: ties, neighbours of ties and the overflow/subnormal edges match a slow reference",
          "[rules][rule0]") {
  for (std::uint32_t k = 0; k < 0x7c00u; ++k) {
    const double midpoint = (half_value(k) + half_value(k + 1)) / 2;  // exact in fp32
    const float m = static_cast<float>(midpoint);
    REQUIRE(static_cast<double>(m) == midpoint);
    for (float f : {static_cast<float>(half_value(k)), m, std::nextafter(m, 0.0f), std::nextafter(m, 1e30f)}) {
      check_half(f);
      check_half(-f);
    }
  }
  // Named edges: largest finite, the round-to-infinity tie, below 2^-25 and at it.
  REQUIRE(dgq::rules::float_to_half(65504.0f) == 0x7bff);
  REQUIRE(dgq::rules::float_to_half(65519.99f) == 0x7bff);
  REQUIRE(dgq::rules::float_to_half(65520.0f) == 0x7c00);
  REQUIRE(dgq::rules::float_to_half(0x1p-25f) == 0x0000);  // tie, to even (zero)
  REQUIRE(dgq::rules::float_to_half(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  REQUIRE(dgq::rules::float_to_half(0x1.8p-24f) == 0x0002);  // 1.5 ulp: tie to even 2
  REQUIRE(dgq::rules::float_to_half(-0.0f) == 0x8000);
  REQUIRE(dgq::rules::float_to_half(1e-45f) == 0x0000);  // fp32 denormal
}

TEST_CASE("float_to_half: a stride over all 2^32 float bit patterns matches the slow reference", "[rules][rule0]") {
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {
    const float f = bits_float(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      REQUIRE((dgq::rules::float_to_half(f) & 0x7fffu) > 0x7c00u);
      continue;
    }
    check_half(f);
  }
}

TEST_CASE("bf16: all 65536 patterns widen exactly; narrowing rounds to nearest even", "[rules][rule0]") {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const float f = dgq::rules::bf16_to_float(static_cast<std::uint16_t>(b));
    REQUIRE(float_bits(f) == b << 16);
    if (!std::isnan(f))
      REQUIRE(dgq::rules::float_to_bf16(f) == b);
    else
      REQUIRE(std::isnan(dgq::rules::bf16_to_float(dgq::rules::float_to_bf16(f))));
  }
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4093) {
    const float f = bits_float(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) continue;
    INFO("bits 0x" << std::hex << u);
    REQUIRE(dgq::rules::float_to_bf16(f) == reference_float_to_bf16(f));
  }
  REQUIRE(dgq::rules::float_to_bf16(bits_float(0x3f808000u)) == 0x3f80);  // tie, even stays
  REQUIRE(dgq::rules::float_to_bf16(bits_float(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
}

TEST_CASE("block_ratio: min over max of the neighbouring block means, 1 when both are 0", "[rules][rule3]") {
  REQUIRE(dgq::rules::block_ratio(0.0f, 0.0f) == 1.0f);
  REQUIRE(dgq::rules::block_ratio(0.0f, 3.0f) == 0.0f);
  REQUIRE(dgq::rules::block_ratio(1.0f, 4.0f) == 0.25f);
  REQUIRE(dgq::rules::block_ratio(4.0f, 1.0f) == 0.25f);
  REQUIRE(dgq::rules::block_ratio(3.0f, 3.0f) == 1.0f);
}

TEST_CASE("segment_budget: the issue's rule(L) capped by max_groups; L=0 -> 0; L < 2*win -> 1", "[rules][rule4]") {
  using dgq::rules::segment_budget;
  REQUIRE(segment_budget(0, 5, 16) == 0);
  REQUIRE(segment_budget(1, 5, 16) == 1);
  REQUIRE(segment_budget(31, 5, 16) == 1);
  REQUIRE(segment_budget(32, 5, 16) == 2);
  REQUIRE(segment_budget(2047, 5, 16) == 2);
  REQUIRE(segment_budget(2048, 5, 16) == 3);
  REQUIRE(segment_budget(16383, 5, 16) == 3);
  REQUIRE(segment_budget(16384, 8, 16) == 6);  // floor(log2(16)) + 2
  REQUIRE(segment_budget(16384, 5, 16) == 5);  // capped
  REQUIRE(segment_budget(32767, 8, 16) == 6);  // floor(32767/1024) = 31 -> log2 4
  REQUIRE(segment_budget(32768, 8, 16) == 7);
  REQUIRE(segment_budget(131072, 8, 16) == 9 - 1);  // rule 9, capped at 8
  REQUIRE(segment_budget(131072, 5, 16) == 5);
  REQUIRE(segment_budget(4096, 1, 16) == 1);
  REQUIRE(segment_budget(100, 5, 64) == 1);  // < 2*win
  REQUIRE(segment_budget(128, 5, 64) == 2);
}

TEST_CASE("canonical_zero: -0 becomes +0, everything else is kept", "[rules][rule6]") {
  REQUIRE(float_bits(dgq::rules::canonical_zero(-0.0f)) == 0u);
  REQUIRE(float_bits(dgq::rules::canonical_zero(0.0f)) == 0u);
  REQUIRE(dgq::rules::canonical_zero(-1.5f) == -1.5f);
  REQUIRE(float_bits(dgq::rules::canonical_zero(-1e-45f)) == float_bits(-1e-45f));
}

TEST_CASE("codes: hand-computed values, ties to even, clamping and flat ranges", "[rules][rule7]") {
  using dgq::rules::quantize_code;
  // lo = 0, hi = 253: inv = 1, so the code is rint(x) - 127.
  const float inv = dgq::rules::code_inverse_step(0.0f, 253.0f);
  REQUIRE(inv == 1.0f);
  REQUIRE(quantize_code(0.0f, 0.0f, inv) == -127);
  REQUIRE(quantize_code(0.5f, 0.0f, inv) == -127);  // tie to even 0
  REQUIRE(quantize_code(1.5f, 0.0f, inv) == -125);  // tie to even 2
  REQUIRE(quantize_code(2.5f, 0.0f, inv) == -125);  // tie to even 2
  REQUIRE(quantize_code(126.5f, 0.0f, inv) == -1);  // 126
  REQUIRE(quantize_code(127.0f, 0.0f, inv) == 0);
  REQUIRE(quantize_code(253.0f, 0.0f, inv) == 126);
  REQUIRE(quantize_code(300.0f, 0.0f, inv) == 126);  // clamped to q = 253
  // lo = -1, hi = 1: inv = 126.5; x = 0 -> rint(126.5) = 126 -> code -1.
  REQUIRE(dgq::rules::code_inverse_step(-1.0f, 1.0f) == 126.5f);
  REQUIRE(quantize_code(0.0f, -1.0f, 126.5f) == -1);
  // Flat and too-narrow ranges: inv 0, every code -127.
  REQUIRE(dgq::rules::code_inverse_step(2.0f, 2.0f) == 0.0f);
  REQUIRE(dgq::rules::code_inverse_step(0.0f, 1e-45f) == 0.0f);  // 253/1e-45 overflows
  REQUIRE(quantize_code(2.0f, 2.0f, 0.0f) == -127);
}

TEST_CASE("dequantize: fma(code + 127, scale, lo) with scale = (hi - lo)/253", "[rules][rule7]") {
  REQUIRE(dgq::rules::dequant_scale(0.0f, 253.0f) == 1.0f);
  REQUIRE(dgq::rules::dequantize_code(-127, 5.0f, 1.0f) == 5.0f);
  REQUIRE(dgq::rules::dequantize_code(126, 0.0f, 1.0f) == 253.0f);
  REQUIRE(dgq::rules::dequantize_code(0, -1.0f, 0.5f) == 62.5f);
  // The fma rounds once. q = 3, scale = 1 + 2^-23, lo = -3: the exact result is 3 * 2^-23.
  // A separately rounded product 3 + 1.5 * 2^-22 is a tie that goes to 3 + 2^-21 (even), so
  // a*b + c without fma would give 2^-21 instead.
  const float scale = 1.0f + 0x1p-23f;
  REQUIRE(dgq::rules::dequantize_code(-124, -3.0f, scale) == 3.0f * 0x1p-23f);
}

TEST_CASE("in-band markers: 127 for codes >= 0, -128 below; unmark gives 126 and -127", "[rules][rule8]") {
  REQUIRE(dgq::rules::inband_mark(0) == 127);
  REQUIRE(dgq::rules::inband_mark(126) == 127);
  REQUIRE(dgq::rules::inband_mark(-1) == -128);
  REQUIRE(dgq::rules::inband_mark(-127) == -128);
  REQUIRE(dgq::rules::is_inband_marker(127));
  REQUIRE(dgq::rules::is_inband_marker(-128));
  REQUIRE_FALSE(dgq::rules::is_inband_marker(126));
  REQUIRE_FALSE(dgq::rules::is_inband_marker(-127));
  REQUIRE(dgq::rules::inband_unmark(127) == 126);
  REQUIRE(dgq::rules::inband_unmark(-128) == -127);
  REQUIRE(dgq::rules::inband_unmark(5) == 5);
}

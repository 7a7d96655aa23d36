// DGQ v2's stored ranges (docs/spec.md rule V4): fp16 endpoints rounded outwards, so that the
// stored range still holds every value; fp32 endpoints as v1 (no negative zero); ranges that do
// not fit are refused with a message naming them.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dgq/cpu/kernels.hpp"
#include "dgq/schemes/dgq2/range_store.hpp"
#include "test_seed.hpp"

namespace dgq2 = dgq::schemes::dgq2;
using dgq::rules::half_to_float;

namespace {

dgq::schemes::MinMax range_of(std::initializer_list<float> values) {
  dgq::schemes::MinMax r;
  for (const float v : values) r.add(v);
  return r;
}

std::string where() { return "segment 0 (tokens 0..3), channel 2"; }

}  // namespace

TEST_CASE("dgq2 fp16 endpoints: exact for fp16 numbers, zero without sign", "[dgq2][ranges][edge]") {
  for (const float v : {0.0f, 1.0f, -1.0f, 65504.0f, -65504.0f, 0x1p-24f, -0x1p-24f, 0x1p-14f, 3.140625f}) {
    CAPTURE(v);
    CHECK(half_to_float(dgq2::half_at_or_below(v)) == v);
    CHECK(half_to_float(dgq2::half_at_or_above(v)) == v);
  }
  CHECK(dgq2::half_at_or_below(-0.0f) == 0x0000u);
  CHECK(dgq2::half_at_or_above(-0.0f) == 0x0000u);
  // Tiny values on either side of zero: outward to the smallest subnormal, inward to +0.
  CHECK(dgq2::half_at_or_below(1e-9f) == 0x0000u);
  CHECK(dgq2::half_at_or_above(1e-9f) == 0x0001u);
  CHECK(dgq2::half_at_or_below(-1e-9f) == 0x8001u);
  CHECK(dgq2::half_at_or_above(-1e-9f) == 0x0000u);
}

TEST_CASE("dgq2 fp16 endpoints: the nearest fp16 on the outer side of any fp32 value", "[dgq2][ranges]") {
  std::mt19937_64 gen(dgq::test::seed() * 17u + 3u);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 15);
  for (int i = 0; i < 200000; ++i) {
    const float v = std::ldexp(mantissa(gen), exponent(gen));
    if (std::fabs(v) > dgq2::kHalfMax) continue;
    CAPTURE(v);
    const std::uint16_t down = dgq2::half_at_or_below(v), up = dgq2::half_at_or_above(v);
    REQUIRE(half_to_float(down) <= v);
    REQUIRE(half_to_float(up) >= v);
    // Tight: the next fp16 beyond each is on the other side of v.
    REQUIRE(half_to_float(dgq2::half_step_up(down)) > v);
    REQUIRE(half_to_float(dgq2::half_step_down(up)) < v);
  }
}

TEST_CASE("dgq2 stored ranges: bytes, read-back and the errors for ranges that do not fit", "[dgq2][ranges][errors]") {
  std::vector<std::uint8_t> bytes;
  const dgq2::StoredRange a = dgq2::store_range(range_of({-1.0f / 3, 2.0f / 3}), dgq2::RangeDtype::fp16, bytes, where);
  CHECK(bytes.size() == 4);
  CHECK(a.lo <= -1.0f / 3);
  CHECK(a.hi >= 2.0f / 3);
  const dgq2::StoredRange b = dgq2::store_range(range_of({-0.0f, 5.0f}), dgq2::RangeDtype::fp32, bytes, where);
  CHECK(bytes.size() == 12);
  CHECK(!std::signbit(b.lo));
  CHECK(dgq2::load_range(bytes, 0, dgq2::RangeDtype::fp16).lo == a.lo);
  CHECK(dgq2::load_range(bytes, 0, dgq2::RangeDtype::fp16).hi == a.hi);
  const std::vector<std::uint8_t> fp32(bytes.begin() + 4, bytes.end());
  CHECK(dgq2::load_range(fp32, 0, dgq2::RangeDtype::fp32).hi == 5.0f);

  std::vector<std::uint8_t> unused;
  CHECK_THROWS_WITH(dgq2::store_range(range_of({0.0f, 70000.0f}), dgq2::RangeDtype::fp16, unused, where),
                    "dgq2: value range of segment 0 (tokens 0..3), channel 2 does not fit fp16 (|value| > 65504); "
                    "use range_dtype=fp32");
  const float big = std::numeric_limits<float>::max();
  CHECK_THROWS_WITH(dgq2::store_range(range_of({-big, big}), dgq2::RangeDtype::fp32, unused, where),
                    "dgq2: value range of segment 0 (tokens 0..3), channel 2 overflows fp32");
  CHECK(unused.empty());
  // A stored infinity is corruption, refused on reading.
  const std::vector<std::uint8_t> inf_hi{0x00, 0x00, 0x00, 0x7c};
  CHECK_THROWS_AS(dgq2::load_range(inf_hi, 0, dgq2::RangeDtype::fp16), dgq::InputError);
}

TEST_CASE("store_fp16_ranges8 stores eight fp16-exact ranges as store_range does, and nothing otherwise",
          "[dgq2][range][fast]") {
  std::mt19937_64 gen(dgq::test::seed() * 1000003u + 4242u);
  // fp16 numbers of every kind (zeros of both signs, subnormals, the extremes) and a few
  // values that are not fp16 numbers or do not fit.
  const auto half_number = [&] {
    static const std::uint16_t pool[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff,
                                         0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
    const std::uint16_t h = gen() % 3 == 0 ? pool[gen() % 10] : static_cast<std::uint16_t>(gen() & 0xffff);
    const float f = half_to_float(h);
    return std::isfinite(f) ? f : 1.0f;
  };
  for (int trial = 0; trial < 20000; ++trial) {
    float mins[8], maxs[8];
    for (int k = 0; k < 8; ++k) {
      float a = half_number(), b = half_number();
      if (b < a) std::swap(a, b);
      mins[k] = a;
      maxs[k] = b;
    }
    const bool spoil = trial % 4 == 0;
    if (spoil) {  // one endpoint that must round outwards, or one beyond fp16
      const int k = static_cast<int>(gen() % 8);
      if (gen() % 2 == 0)
        mins[k] -= 1e-3f * (1.0f + std::fabs(mins[k]));
      else
        maxs[k] = 70000.0f;
    }
    for (const int levels : {15, 13, 3, 255}) {
      std::vector<std::uint8_t> fast{0xEE}, plain{0xEE};
      float lo[8], inv[8];
      const bool done = dgq::cpu::fast_kernels().store_fp16_ranges8(mins, maxs, levels, fast, lo, inv);
      bool all_exact = true;
      for (int k = 0; k < 8; ++k) {
        all_exact = all_exact && half_to_float(dgq::rules::float_to_half(mins[k])) == mins[k] &&
                    half_to_float(dgq::rules::float_to_half(maxs[k])) == maxs[k];
      }
#if defined(__F16C__) && defined(__AVX2__)
      CHECK(done == all_exact);  // with F16C, every fp16-exact octet takes the fast path
#endif
      if (!done) {
        CHECK(fast.size() == 1);  // nothing appended
        continue;
      }
      REQUIRE(all_exact);
      for (int k = 0; k < 8; ++k) {
        const dgq2::StoredRange r = dgq2::store_range(dgq::schemes::MinMax{mins[k], maxs[k]}, dgq2::RangeDtype::fp16,
                                                      plain, [] { return std::string(); });
        CHECK(dgq::rules::float_bits(lo[k]) == dgq::rules::float_bits(r.lo));
        CHECK(dgq::rules::float_bits(inv[k]) ==
              dgq::rules::float_bits(dgq::schemes::uniform_inverse(r.lo, r.hi, levels)));
      }
      REQUIRE(fast == plain);
    }
  }
}

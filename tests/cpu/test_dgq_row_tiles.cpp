// The block-at-a-time kernels (scan_rows, quantize_rows) that the encoder calls: the fast path
// must give the scalar oracle's bits for every row length, dtype and kind of value, including
// the cases its shortcuts rest on (finiteness read from the sum, clamps after packing).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dgq/element_rules.hpp"
#include "kernel_pairs.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace {

using dgq::DType;
using dgq::rules::float_bits;
using namespace dgq::kernels;

constexpr DType kDtypes[] = {DType::f16, DType::bf16, DType::f32};
constexpr std::int64_t kMaxRowLength = 300;

float smallest_subnormal(DType dt) {
  return dt == DType::f16 ? 0x1p-24f : std::numeric_limits<float>::denorm_min();  // bf16 keeps fp32's
}

// Random values mixed with zeros of both signs, subnormals and the dtype's extremes.
dgq::test::OwnedTensor adversarial_rows(DType dt, std::int64_t rows, std::int64_t n, std::uint64_t seed) {
  dgq::test::SplitMix64 rng(seed);
  dgq::test::OwnedTensor x(dt, rows, n);
  for (std::int64_t t = 0; t < rows; ++t) {
    for (std::int64_t d = 0; d < n; ++d) {
      float v = 0.0f;
      switch (rng.next() % 10) {
        case 0: v = -0.0f; break;
        case 1: v = smallest_subnormal(dt); break;
        case 2: v = -smallest_subnormal(dt); break;
        case 3: v = dt == DType::f16 ? 65504.0f : 1e30f; break;
        case 4: v = dt == DType::f16 ? -65504.0f : -1e30f; break;
        default: v = rng.symmetric(100.0f);
      }
      x.set(t, d, v);
    }
  }
  return x;
}

struct ScanResult {
  std::int64_t scanned = 0;
  std::vector<RowStats> stats;
  std::vector<float> row, lo, hi;
};

template <class Scan>
ScanResult run_scan(Scan scan, const dgq::test::OwnedTensor& x, RangeShape shape) {
  const std::int64_t n = x.channels;
  const std::size_t ranges = shape == RangeShape::per_channel ? static_cast<std::size_t>(n) : 1;
  ScanResult r;
  r.stats.resize(static_cast<std::size_t>(x.tokens));
  r.row.resize(static_cast<std::size_t>(n));
  r.lo.assign(ranges, INFINITY);
  r.hi.assign(ranges, -INFINITY);
  r.scanned = scan(x.bytes.data(), x.dtype, x.tokens, n, r.row.data(), r.lo.data(), r.hi.data(), shape, r.stats.data());
  return r;
}

void require_same_stats(const ScanResult& s, const ScanResult& f) {
  REQUIRE(s.scanned == f.scanned);
  for (std::int64_t t = 0; t < s.scanned; ++t) {
    CAPTURE(t);
    REQUIRE(s.stats[t].finite == f.stats[t].finite);
    REQUIRE(float_bits(s.stats[t].sum) == float_bits(f.stats[t].sum));
    REQUIRE(float_bits(s.stats[t].sum_squares) == float_bits(f.stats[t].sum_squares));
  }
  // The row buffer holds the last scanned (or the rejected) row's fp32 values.
  REQUIRE(std::memcmp(s.row.data(), f.row.data(), 4 * s.row.size()) == 0);
}

}  // namespace

TEST_CASE("scan_rows: fast equals scalar for row lengths 1..300, all dtypes, both range shapes",
          "[dgq][rule0][rule1]") {
  for (const DType dt : kDtypes) {
    for (std::int64_t n = 1; n <= kMaxRowLength; ++n) {
      CAPTURE(dgq::dtype_name(dt), n);
      const auto x = adversarial_rows(dt, 3, n, dgq::test::seed() + 7 * n);
      for (const auto shape : {RangeShape::per_channel, RangeShape::whole_row}) {
        const ScanResult s = run_scan(scalar::scan_rows, x, shape);
        const ScanResult f = run_scan(fast::scan_rows, x, shape);
        REQUIRE(s.scanned == 3);
        require_same_stats(s, f);
        REQUIRE(s.lo == f.lo);  // == : a zero extreme's sign is fixed by rule 6
        REQUIRE(s.hi == f.hi);
      }
    }
  }
}

TEST_CASE("scan_rows: both paths stop at the first row holding NaN or Inf, wherever it sits", "[dgq][rule0]") {
  for (const DType dt : kDtypes) {
    for (const std::int64_t n : {1, 7, 8, 31, 32, 33, 128, 131}) {
      for (const float bad : {NAN, INFINITY, -INFINITY}) {
        for (const std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
          CAPTURE(dgq::dtype_name(dt), n, bad, at);
          auto x = adversarial_rows(dt, 4, n, dgq::test::seed() + n);
          x.set(2, at, bad);
          x.set(3, 0, NAN);  // a later bad row must not be the one reported
          for (const auto shape : {RangeShape::per_channel, RangeShape::whole_row}) {
            const ScanResult s = run_scan(scalar::scan_rows, x, shape);
            const ScanResult f = run_scan(fast::scan_rows, x, shape);
            REQUIRE(s.scanned == 2);
            require_same_stats(s, f);
          }
        }
      }
    }
  }
}

TEST_CASE("scan_rows: finite bf16/f32 rows whose sum overflows are finite rows with an infinite sum",
          "[dgq][rule0][rule1]") {
  // The fast path reads finiteness from the sum; an overflowing sum must not be taken for an Inf.
  for (const DType dt : {DType::bf16, DType::f32}) {
    for (const std::int64_t n : {17, 33, 64, 128}) {
      CAPTURE(dgq::dtype_name(dt), n);
      dgq::test::OwnedTensor x(dt, 2, n);
      for (std::int64_t d = 0; d < n; ++d) {
        x.set(0, d, d % 32 == 0 || d % 32 == 16 ? 3e38f : 1.0f);  // lanes 0 and 16 meet at s = 16
        x.set(1, d, -3e38f);
      }
      for (const auto shape : {RangeShape::per_channel, RangeShape::whole_row}) {
        const ScanResult s = run_scan(scalar::scan_rows, x, shape);
        const ScanResult f = run_scan(fast::scan_rows, x, shape);
        REQUIRE(s.scanned == 2);
        REQUIRE(std::isinf(s.stats[0].sum));
        require_same_stats(s, f);
      }
    }
  }
}

namespace {

std::vector<std::int8_t> quantize_with(void (*quantize)(const void*, DType, std::int64_t, std::int64_t, const float*,
                                                        const float*, std::int8_t*),
                                       const dgq::test::OwnedTensor& x, const std::vector<float>& lo,
                                       const std::vector<float>& inv) {
  std::vector<std::int8_t> codes(x.bytes.size() / dgq::dtype_size(x.dtype));
  quantize(x.bytes.data(), x.dtype, x.tokens, x.channels, lo.data(), inv.data(), codes.data());
  return codes;
}

}  // namespace

TEST_CASE("quantize_rows: fast equals scalar at .5 ties, past both ends of [0, 253] and for NaN q", "[dgq][rule7]") {
  // Integer x with lo = k - 0.5 puts q = (x - lo) * 1 exactly on a tie, for even and odd
  // results, from far below 0 to far above 253; huge inv overflows int32; lo = +Inf with
  // inv = 0 makes q NaN (fmaxf(NaN, 0) = 0: code -127).
  for (const DType dt : kDtypes) {
    for (std::int64_t n = 1; n <= kMaxRowLength; ++n) {
      CAPTURE(dgq::dtype_name(dt), n);
      dgq::test::OwnedTensor x(dt, 3, n);
      std::vector<float> lo(static_cast<std::size_t>(n)), inv(lo.size());
      for (std::int64_t d = 0; d < n; ++d) {
        x.set(0, d, static_cast<float>(d % 256));
        x.set(1, d, static_cast<float>(255 - d % 256));
        x.set(2, d, -static_cast<float>(d % 7));
        switch (d % 6) {
          case 0: lo[d] = -0.5f, inv[d] = 1.0f; break;
          case 1: lo[d] = -1.5f, inv[d] = 1.0f; break;
          case 2: lo[d] = 20.5f, inv[d] = 1.0f; break;     // negative q, ties below zero
          case 3: lo[d] = -0.25f, inv[d] = 1e30f; break;   // beyond int32
          case 4: lo[d] = INFINITY, inv[d] = 0.0f; break;  // NaN
          default: lo[d] = -3.0f, inv[d] = 0.5f; break;    // (x + 3) / 2: ties on odd x
        }
      }
      REQUIRE(quantize_with(scalar::quantize_rows, x, lo, inv) == quantize_with(fast::quantize_rows, x, lo, inv));
    }
  }
}

TEST_CASE("quantize_rows: fast equals scalar on adversarial rows with per-channel segment ranges", "[dgq][rule7]") {
  for (const DType dt : kDtypes) {
    for (std::int64_t n = 1; n <= kMaxRowLength; ++n) {
      CAPTURE(dgq::dtype_name(dt), n);
      const auto x = adversarial_rows(dt, 4, n, dgq::test::seed() + 3 * n);
      // Each channel's range spans its values over the 4 rows, as rule 6 builds it; every
      // fifth channel is given a flat range (inv = 0).
      std::vector<float> lo(static_cast<std::size_t>(n)), inv(lo.size());
      for (std::int64_t d = 0; d < n; ++d) {
        float a = INFINITY, b = -INFINITY;
        for (std::int64_t t = 0; t < 4; ++t) a = std::fmin(a, x.get(t, d)), b = std::fmax(b, x.get(t, d));
        lo[d] = dgq::rules::canonical_zero(a);
        inv[d] = d % 5 == 0 ? 0.0f : dgq::rules::code_inverse_step(lo[d], dgq::rules::canonical_zero(b));
      }
      REQUIRE(quantize_with(scalar::quantize_rows, x, lo, inv) == quantize_with(fast::quantize_rows, x, lo, inv));
    }
  }
}

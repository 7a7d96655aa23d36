#pragma once
// DGQ v2's stored ranges (docs/spec.md, "DGQ v2", rule V4): (lo, hi) pairs, fp32 or fp16,
// little-endian, lo first. fp16 endpoints are rounded outwards (lo down, hi up), so every
// value of the range still lies in [lo, hi]: codes are computed from the stored endpoints and
// no value is clamped by the narrower storage. For fp16 input every min/max is already an fp16
// number and the rounding changes nothing.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "params.hpp"

namespace dgq::schemes::dgq2 {

inline constexpr float kHalfMax = 65504.0f;

// The next fp16 number below / above h (h finite), +0 for the zero between -min and +min.
inline std::uint16_t half_step_down(std::uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0x8001u;  // +-0 -> -(smallest subnormal)
  return (h & 0x8000u) != 0 ? static_cast<std::uint16_t>(h + 1u) : static_cast<std::uint16_t>(h - 1u);
}
inline std::uint16_t half_step_up(std::uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0x0001u;
  return (h & 0x8000u) != 0 ? static_cast<std::uint16_t>(h - 1u) : static_cast<std::uint16_t>(h + 1u);
}
inline std::uint16_t canonical_half_zero(std::uint16_t h) { return h == 0x8000u ? 0 : h; }

// The largest fp16 <= v and the smallest fp16 >= v (|v| <= 65504), without negative zero.
inline std::uint16_t half_at_or_below(float v) {
  std::uint16_t h = rules::float_to_half(v);
  if (rules::half_to_float(h) > v) h = half_step_down(h);
  return canonical_half_zero(h);
}
inline std::uint16_t half_at_or_above(float v) {
  std::uint16_t h = rules::float_to_half(v);
  if (rules::half_to_float(h) < v) h = half_step_up(h);
  return canonical_half_zero(h);
}

struct StoredRange {
  float lo = 0.0f, hi = 0.0f;  // the endpoints as the decoder reads them back
};

// Appends r's stored form to out and returns it. Throws InputError naming the range
// (describe() gives e.g. "segment 1 (tokens 16..31), channel 3") when it does not fit.
template <class Describe>
StoredRange store_range(const MinMax& r, RangeDtype t, std::vector<std::uint8_t>& out, Describe describe) {
  if (t == RangeDtype::fp32) {
    check_range_finite(r, "dgq2", describe);
    const StoredRange s{r.stored_lo(), r.stored_hi()};
    append_range(out, s.lo, s.hi);
    return s;
  }
  if (!(std::fabs(r.lo) <= kHalfMax && std::fabs(r.hi) <= kHalfMax)) {
    throw InputError("dgq2: value range of " + describe() +
                     " does not fit fp16 (|value| > 65504); use range_dtype=fp32");
  }
  const std::uint16_t lo = half_at_or_below(r.lo), hi = half_at_or_above(r.hi);
  append_le(out, lo);
  append_le(out, hi);
  return {rules::half_to_float(lo), rules::half_to_float(hi)};
}

inline StoredRange load_range(const std::vector<std::uint8_t>& bytes, std::size_t index, RangeDtype t) {
  if (t == RangeDtype::fp32) {
    const Range r = read_range(bytes, index);
    return {r.lo, r.hi};
  }
  return {finite_stored(rules::half_to_float(read_le<std::uint16_t>(bytes, 2 * index)), "range", index),
          finite_stored(rules::half_to_float(read_le<std::uint16_t>(bytes, 2 * index + 1)), "range", index)};
}

}  // namespace dgq::schemes::dgq2

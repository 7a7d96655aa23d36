#pragma once
// Asymmetric min/max quantization with `levels` steps, the same arithmetic as DGQ rule 7
// (docs/spec.md) with 253 replaced by levels: inv = levels/(hi - lo) (0 when the range is
// flat or too narrow for fp32), q = clamp(rint((x - lo)*inv), 0, levels), and
// x^ = fma(q, (hi - lo)/levels, lo). The 8-bit schemes use rule 7 itself (dgq::rules).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "dgq/errors.hpp"

namespace dgq::schemes {

inline float uniform_inverse(float lo, float hi, int levels) {
  if (hi == lo) return 0.0f;
  const float inv = static_cast<float>(levels) / (hi - lo);
  return std::isinf(inv) ? 0.0f : inv;
}

// The clamp is written with comparisons rather than fmin/fmax: the inputs are finite (checked
// on entry), so the result is the same, and GCC inlines comparisons but calls libm for
// fminf/fmaxf unless fast-math flags are on.
inline std::uint8_t uniform_code(float x, float lo, float inv, int levels) {
  float q = std::rint((x - lo) * inv);
  q = q < 0.0f ? 0.0f : q;
  q = q > static_cast<float>(levels) ? static_cast<float>(levels) : q;
  return static_cast<std::uint8_t>(q);
}

// DGQ rule 7's code (dgq::rules::quantize_code) with the same arithmetic, inlinable.
inline std::int8_t rule7_code(float x, float lo, float inv) {
  return static_cast<std::int8_t>(static_cast<int>(uniform_code(x, lo, inv, 253)) - 127);
}

inline float uniform_scale(float lo, float hi, int levels) { return (hi - lo) / static_cast<float>(levels); }

inline float uniform_value(std::uint8_t q, float lo, float scale) {
  return std::fmaf(static_cast<float>(q), scale, lo);
}

// Running min/max of a range; the stored endpoints carry no negative zero (rule 6).
struct MinMax {
  float lo = INFINITY, hi = -INFINITY;
  void add(float x) {  // x is finite (checked on entry); comparisons inline, fmin/fmax do not
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  float stored_lo() const { return lo == 0.0f ? 0.0f : lo; }
  float stored_hi() const { return hi == 0.0f ? 0.0f : hi; }
};

// hi - lo must be finite so that the dequantization scale is (only reachable from fp32
// input). describe() names the range, e.g. "token 3, channels 64..127"; it is only called
// on failure, so the hot loop builds no strings.
template <class Describe>
void check_range_finite(const MinMax& r, std::string_view scheme, Describe describe) {
  if (!std::isfinite(r.hi - r.lo)) {
    throw InputError(std::string(scheme) + ": value range of " + describe() + " overflows fp32");
  }
}

}  // namespace dgq::schemes

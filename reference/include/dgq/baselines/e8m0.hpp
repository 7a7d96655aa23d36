#pragma once
// E8M0 (OCP Microscaling Formats v1.0, section 5.4.1): an unsigned 8-bit exponent with bias 127
// and no mantissa; code c is 2^(c-127) for c in 0..254 and 0xFF is NaN. The MX formats store their
// shared block scale in it.
#include <cmath>
#include <cstdint>

namespace dgq::e8m0 {

inline constexpr std::uint8_t kNaN = 0xff;
inline constexpr int kBias = 127;
inline constexpr int kMinExponent = -127;
inline constexpr int kMaxExponent = 127;

// The MX shared exponent of a block whose largest magnitude is amax (finite, >= 0), for an element
// format whose largest normal has exponent emax_elem (e2m1: 2, e4m3: 8): floor(log2(amax)) -
// emax_elem (OCP MX v1.0 section 6.3), clamped to the e8m0 range [-127, 127]. A zero block
// (log2 of 0) takes the smallest scale, -127, as the microxcaling reference library does
// (it adds FP32_MIN_NORMAL to a zero max, then clamps) and as __nv_cvt_float_to_e8m0 clips it.
inline int shared_exponent(float amax, int emax_elem) {
  if (amax == 0.0f) return kMinExponent;
  const int e = std::ilogb(amax) - emax_elem;  // ilogb is exact, subnormals included
  return e < kMinExponent ? kMinExponent : (e > kMaxExponent ? kMaxExponent : e);
}

inline std::uint8_t encode_exponent(int e) { return static_cast<std::uint8_t>(e + kBias); }

// The scale a code stands for: 2^(c-127), NaN for 0xFF.
inline float to_float(std::uint8_t c) {
  if (c == kNaN) return std::nanf("");
  return std::ldexp(1.0f, static_cast<int>(c) - kBias);
}

}  // namespace dgq::e8m0

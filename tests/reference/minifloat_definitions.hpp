#pragma once
// The values of the small float codes from their definitions (sign, exponent with its bias,
// mantissa, subnormals at exponent 0), written with ldexp instead of bit assembly or tables so
// that they share no code with dgq/baselines/ (fp8_e4m3.hpp, fp4_e2m1.hpp): the independent side
// of the fp8, NVFP4 and MX tests.
#include <cmath>
#include <limits>

namespace dgq::test {

// e4m3 (OCP FP8, bias 7, 3-bit mantissa; S.1111.111 is NaN, no infinities).
inline float e4m3_by_definition(int code) {
  const float sign = (code & 0x80) ? -1.0f : 1.0f;
  const int exponent = (code >> 3) & 15, mantissa = code & 7;
  if (exponent == 15 && mantissa == 7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

// e2m1 (OCP FP4, bias 1, 1-bit mantissa; every code a number: 0, 0.5 ... 6).
inline float e2m1_by_definition(int code) {
  const float sign = (code & 8) ? -1.0f : 1.0f;
  const int exponent = (code >> 1) & 3, mantissa = code & 1;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -1);
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 2.0f, exponent - 1);
}

}  // namespace dgq::test

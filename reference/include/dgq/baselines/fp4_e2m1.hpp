#pragma once
// FP4 E2M1 (OCP MX v1.0 section 5.3.3; NVIDIA __nv_fp4_e2m1): 1 sign, 2 exponent bits (bias 1),
// 1 mantissa bit, no infinities and no NaN. Magnitudes of codes 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6;
// bit 3 is the sign (code 8 is -0). Two codes share a byte in every format that stores them
// (NVFP4, MXFP4): the even element in the low nibble, as cvt.rn.satfinite.e2m1x2.f32 packs them.
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/host_device.hpp"

namespace dgq::fp4 {

inline constexpr float kE2M1Max = 6.0f;

// fp32 -> e2m1, round to nearest even, saturating: every |x| above 6 (and +-inf) becomes +-6, as
// __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) and the PTX cvt.rn.satfinite do. The
// ties 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5 go to the code with an even mantissa bit. NaN maps to
// +6 as CUDA's conversion documents (no scheme feeds it one: inputs are checked finite).
DGQ_HD std::uint8_t float_to_e2m1(float x) {
  const std::uint32_t bits = rules::float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 28) & 0x8u);
  const float a = rules::bits_float(bits & 0x7fffffffu);
  if (a != a) return 0x7;
  std::uint8_t m;
  if (a <= 0.25f)
    m = 0;
  else if (a < 0.75f)
    m = 1;
  else if (a <= 1.25f)
    m = 2;
  else if (a < 1.75f)
    m = 3;
  else if (a <= 2.5f)
    m = 4;
  else if (a < 3.5f)
    m = 5;
  else if (a <= 5.0f)
    m = 6;
  else
    m = 7;
  return sign | m;
}

// The value of a code (its low 4 bits); exact in fp32.
DGQ_HD float e2m1_to_float(std::uint8_t c) {
  constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[c & 0x7u];
  return (c & 0x8u) ? -m : m;
}

}  // namespace dgq::fp4

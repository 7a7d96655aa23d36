#pragma once
// FP8 E4M3 ("e4m3fn", OCP FP8 / NVIDIA __nv_fp8_e4m3): 1 sign, 4 exponent bits (bias 7),
// 3 mantissa bits, no infinities, NaN = S.1111.111, largest finite 448 (0x7e), smallest
// normal 2^-6, subnormal step 2^-9. Written for host and device (DGQ_HD) so a CUDA kernel can
// reuse the same conversion.
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/host_device.hpp"

namespace dgq::fp8 {

inline constexpr float kE4M3Max = 448.0f;
inline constexpr std::uint8_t kE4M3MaxBits = 0x7e;
inline constexpr std::uint8_t kE4M3NaN = 0x7f;

// fp32 -> e4m3, round to nearest even, saturating: every finite |x| that rounds above 448
// (and +-inf) becomes +-448, as __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) does.
DGQ_HD std::uint8_t float_to_e4m3(float x) {
  const std::uint32_t bits = rules::float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | kE4M3NaN;
  if (abs_bits >= 0x43e00000u) return sign | kE4M3MaxBits;  // |x| >= 448
  if (abs_bits < 0x3c800000u) {                             // |x| < 2^-6: subnormal e4m3
    // |x| * 2^9 is exact (a power-of-two scaling that stays in range) and rint rounds half
    // to even; a result of 8 is the bit pattern of the smallest normal 2^-6.
    const float units = rintf(rules::bits_float(abs_bits) * 512.0f);
    return sign | static_cast<std::uint8_t>(units);
  }
  const std::uint32_t exponent = (abs_bits >> 23) - 127u + 7u;  // in [1, 15]
  const std::uint32_t mantissa = abs_bits & 0x7fffffu;
  std::uint32_t r = (exponent << 3) | (mantissa >> 20);
  const std::uint32_t rest = mantissa & 0xfffffu;
  if (rest > 0x80000u || (rest == 0x80000u && (r & 1u))) ++r;  // carries into the exponent
  if (r > kE4M3MaxBits) r = kE4M3MaxBits;                      // 464 and up would round to NaN's slot
  return sign | static_cast<std::uint8_t>(r);
}

DGQ_HD float e4m3_to_float(std::uint8_t c) {
  const std::uint32_t sign = static_cast<std::uint32_t>(c & 0x80u) << 24;
  const std::uint32_t exponent = (c >> 3) & 0xfu;
  const std::uint32_t mantissa = c & 0x7u;
  if (exponent == 0xfu && mantissa == 0x7u) return rules::bits_float(sign | 0x7fc00000u);
  if (exponent == 0) {
    return rules::bits_float(sign | rules::float_bits(static_cast<float>(mantissa) * 0.001953125f));
  }
  return rules::bits_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

}  // namespace dgq::fp8

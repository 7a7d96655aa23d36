#include "block_codes.hpp"

#include <cmath>
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq::schemes::dgq3 {

std::uint16_t block_scale(const float* y, std::int64_t n, int bits, std::int64_t t, std::int64_t b) {
  float extreme = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::fabs(y[i]) > std::fabs(extreme)) extreme = y[i];
  }
  const float lowest = -static_cast<float>(1 << (bits - 1));
  const std::uint16_t h = rules::float_to_half(extreme / lowest);
  if ((h & 0x7c00u) == 0x7c00u) {
    throw InputError("dgq3: the scale of token " + std::to_string(t) + ", block " + std::to_string(b) +
                     " does not fit fp16");
  }
  return static_cast<std::uint16_t>(h == 0x8000u ? 0 : h);  // -0 is stored as +0
}

void put_block_codes(const float* y, std::int64_t n, int bits, std::uint16_t scale, std::uint8_t* out,
                     std::uint64_t bit_offset) {
  const float d = rules::half_to_float(scale);
  const float inverse = d == 0.0f ? 0.0f : 1.0f / d;
  const float lo = -static_cast<float>(1 << (bits - 1)), hi = static_cast<float>((1 << (bits - 1)) - 1);
  for (std::int64_t i = 0; i < n; ++i) {
    const float q = std::fmin(std::fmax(rintf(y[i] * inverse), lo), hi);
    const auto u = static_cast<std::uint32_t>(static_cast<int>(q) + (1 << (bits - 1)));
    const std::uint64_t bit = bit_offset + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(bits);
    const std::uint32_t shifted = u << (bit % 8);  // at most 8 + 7 bits: two bytes
    out[bit / 8] |= static_cast<std::uint8_t>(shifted & 0xffu);
    if (shifted > 0xffu) out[bit / 8 + 1] |= static_cast<std::uint8_t>(shifted >> 8);
  }
}

void get_block_values(const std::uint8_t* in, std::uint64_t bit_offset, std::int64_t n, int bits,
                      std::uint16_t scale, float* y) {
  const float d = rules::half_to_float(scale);
  const std::uint32_t mask = (1u << bits) - 1u;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t bit = bit_offset + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(bits);
    std::uint32_t word = in[bit / 8];
    if (bit % 8 + static_cast<std::uint64_t>(bits) > 8) word |= static_cast<std::uint32_t>(in[bit / 8 + 1]) << 8;
    const int u = static_cast<int>((word >> (bit % 8)) & mask);
    y[i] = static_cast<float>(u - (1 << (bits - 1))) * d;
  }
}

}  // namespace dgq::schemes::dgq3

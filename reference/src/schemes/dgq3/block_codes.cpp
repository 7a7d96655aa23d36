#include "block_codes.hpp"

#include <cassert>
#include <cstring>
#include <string>

#include "dgq/dgq3_grids.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::schemes::dgq3 {
namespace {

constexpr std::int64_t kMostChannels = 256;  // the largest block (parameter `block`)

// u[0 .. n) at `bits` each into a little-endian bit stream, lowest code in the lowest bits.
void pack_codes(const std::uint8_t* u, std::int64_t n, int bits, std::uint8_t* out) {
  if (bits == 8) {
    std::memcpy(out, u, static_cast<std::size_t>(n));
    return;
  }
  if (bits == 4) {
    for (std::int64_t i = 0; i < n / 2; ++i) out[i] = static_cast<std::uint8_t>(u[2 * i] | u[2 * i + 1] << 4);
    return;
  }
  std::uint32_t pending = 0;
  int held = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    pending |= static_cast<std::uint32_t>(u[i]) << held;
    for (held += bits; held >= 8; held -= 8, pending >>= 8) *out++ = static_cast<std::uint8_t>(pending & 0xffu);
  }
  assert(held == 0);
}

void unpack_codes(const std::uint8_t* in, std::int64_t n, int bits, std::uint8_t* u) {
  if (bits == 8) {
    std::memcpy(u, in, static_cast<std::size_t>(n));
    return;
  }
  if (bits == 4) {
    for (std::int64_t i = 0; i < n / 2; ++i) {
      u[2 * i] = in[i] & 0x0fu;
      u[2 * i + 1] = in[i] >> 4;
    }
    return;
  }
  const std::uint32_t mask = (1u << bits) - 1u;
  std::uint32_t pending = 0;
  int held = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (held < bits) {
      pending |= static_cast<std::uint32_t>(*in++) << held;
      held += 8;
    }
    u[i] = static_cast<std::uint8_t>(pending & mask);
    pending >>= bits;
    held -= bits;
  }
}

void decode_codes(const kernels::CpuKernels& k, const std::uint8_t* u, std::int64_t n, int bits, CodeGrid grid, float d,
                  float* y) {
  if (grid == CodeGrid::lloyd) {
    k.grid_values(u, n, bits, d, y);
  } else {
    k.symmetric_values(u, n, bits, d, y);
  }
}

}  // namespace

std::uint16_t block_scale(const kernels::CpuKernels& k, const float* y, std::int64_t n, int bits, CodeGrid grid,
                          std::int64_t t, std::int64_t b) {
  const float extreme = k.signed_extreme(y, n);
  const float lowest =
      grid == CodeGrid::lloyd ? static_cast<float>(rules::grid_level(bits, 0)) : -static_cast<float>(1 << (bits - 1));
  const std::uint16_t h = rules::float_to_half(extreme / lowest);
  if ((h & 0x7c00u) == 0x7c00u) {
    throw InputError("dgq3: the scale of token " + std::to_string(t) + ", block " + std::to_string(b) +
                     " does not fit fp16");
  }
  return static_cast<std::uint16_t>(h == 0x8000u ? 0 : h);  // -0 is stored as +0
}

void put_block_codes(const kernels::CpuKernels& k, const float* y, std::int64_t n, int bits, CodeGrid grid,
                     std::uint16_t scale, std::uint8_t* out, std::uint64_t byte_offset, float* values) {
  assert(n <= kMostChannels && (n * bits) % 8 == 0);
  assert(grid == CodeGrid::uniform || (bits >= rules::kGridLowestBits && bits <= rules::kGridHighestBits));
  const float d = rules::half_to_float(scale);
  const float inverse = d == 0.0f ? 0.0f : 1.0f / d;
  std::uint8_t u[kMostChannels];
  if (grid == CodeGrid::lloyd) {
    k.grid_codes(y, n, inverse, bits, u);
  } else {
    k.symmetric_codes(y, n, inverse, bits, u);
  }
  pack_codes(u, n, bits, out + byte_offset);
  if (values != nullptr) decode_codes(k, u, n, bits, grid, d, values);
}

void get_block_values(const kernels::CpuKernels& k, const std::uint8_t* in, std::uint64_t byte_offset, std::int64_t n,
                      int bits, CodeGrid grid, std::uint16_t scale, float* y) {
  assert(n <= kMostChannels && (n * bits) % 8 == 0);
  std::uint8_t u[kMostChannels];
  unpack_codes(in + byte_offset, n, bits, u);
  decode_codes(k, u, n, bits, grid, rules::half_to_float(scale), y);
}

}  // namespace dgq::schemes::dgq3

// ggml's q8_0 runtime quantizer, scalar but with ggml's AVX2 path's arithmetic: amax in fp32,
// d = amax/127 rounded to fp16 (nearest even), id = 127/amax, q = nearbyint(x*id). cpu/ has
// the vectorized rows (cpu/src/q8_0_avx2.cpp).
#include <cmath>
#include <cstring>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::q8_0 {
namespace {

// fp32 -> fp16 bits, nearest even (subnormals and overflow to inf included).
inline std::uint16_t half_of(float v) { return rules::float_to_half(v); }

inline float float_of(std::uint16_t h) { return rules::half_to_float(h); }

bool finite_half(std::uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

}  // namespace

std::uint16_t quantize_block_into(const float* x, int n, std::uint8_t* out) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j)
    amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;  // finite input: same as fmax, inlined
  const std::uint16_t d = rules::float_to_half(amax / 127.0f);
  std::memcpy(out, &d, sizeof d);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    // |x*id| <= 127 up to one rounding, so the int8 conversion never saturates.
    const std::int8_t q = j < n ? static_cast<std::int8_t>(std::nearbyint(x[j] * id)) : std::int8_t{0};
    std::memcpy(out + sizeof d + j, &q, 1);
  }
  return d;
}

void quantize_block(const float* x, int n, Block& block) {
  // Block is d then qs with no padding (static_assert in q8_0.hpp): its bytes are the stored ones.
  quantize_block_into(x, n, reinterpret_cast<std::uint8_t*>(&block));
}

void dequantize_block(const Block& block, int n, float* out) {
  const float d = rules::half_to_float(block.d);
  for (int j = 0; j < n; ++j) out[j] = static_cast<float>(block.qs[j]) * d;
}

RowStatus quantize_row_into(const float* x, std::int64_t n, std::uint8_t* out) {
  std::uint32_t finite_scales = 1, non_finite = 0;
  std::int64_t first = 0;
  for (; first < n; first += kBlockValues, out += kBlockBytes) {
    const int count = static_cast<int>(n - first < kBlockValues ? n - first : kBlockValues);
    for (int j = 0; j < count; ++j) non_finite |= std::isfinite(x[first + j]) ? 0u : 1u;
    finite_scales &= finite_half(quantize_block_into(x + first, count, out)) ? 1u : 0u;
  }
  if (non_finite != 0) return RowStatus::non_finite_input;
  return finite_scales != 0 ? RowStatus::ok : RowStatus::scale_overflow;
}

bool dequantize_row(const std::uint8_t* blocks, std::int64_t n, float* out) {
  std::uint32_t finite = 1;
  std::int64_t first = 0;
  for (; first < n; first += kBlockValues, blocks += kBlockBytes) {
    std::uint16_t bits;
    std::memcpy(&bits, blocks, sizeof bits);
    finite &= finite_half(bits) ? 1u : 0u;
    const float d = float_of(bits);
    const auto* qs = reinterpret_cast<const std::int8_t*>(blocks + sizeof bits);
    const std::int64_t count = n - first < kBlockValues ? n - first : kBlockValues;
    for (std::int64_t j = 0; j < count; ++j) out[first + j] = static_cast<float>(qs[j]) * d;
  }
  return finite != 0;
}

}  // namespace dgq::q8_0

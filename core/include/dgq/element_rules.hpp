#pragma once
// The scalar rules of DGQ v1 (docs/spec.md), shared verbatim by the CPU reference and the
// CUDA kernels. Only per-element arithmetic lives here: loops, reductions and data movement
// are written separately per backend so that the differential tests mean something.
// Compile with -ffp-contract=off (host) / -fmad=false (nvcc): every fma here is explicit.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "dgq/host_device.hpp"

namespace dgq::rules {

// ---- Rule 0: dtype conversions (exact widening, round-to-nearest-even narrowing) -------
DGQ_HD std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
DGQ_HD float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

DGQ_HD float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    // Subnormal: mant * 2^-24, exact in fp32 (the product is a normal fp32 number).
    const float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return bits_float(sign | float_bits(magnitude));
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

DGQ_HD std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (ax < 0x38800000u) {                        // below 2^-14: half subnormal or zero
    if (ax <= 0x33000000u) return sign;          // <= 2^-25 rounds to zero (tie to even)
    const std::uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - (ax >> 23);
    std::uint32_t r = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t r = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
  const std::uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<std::uint16_t>(sign | r);
}

DGQ_HD float bf16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

DGQ_HD std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ---- Rule 1: the canonical sums' accumulate steps --------------------------------------
inline constexpr int kCanonicalLanes = 32;                  // accumulator d mod 32
inline constexpr int kCanonicalTree[5] = {16, 8, 4, 2, 1};  // acc[j] += acc[j+s], j < s

DGQ_HD float sum_step(float acc, float x) { return acc + x; }
DGQ_HD float square_step(float acc, float delta) { return fmaf(delta, delta, acc); }

// ---- Rule 3: the ratio of neighbouring block means ------------------------------------
DGQ_HD float block_ratio(float m_prev, float m_cur) {
  const float lo = fminf(m_prev, m_cur);
  const float hi = fmaxf(m_prev, m_cur);
  if (hi == 0.0f) return 1.0f;
  return lo / hi;
}

// ---- Rule 4: the segment budget ---------------------------------------------------------
DGQ_HD int segment_budget(std::int64_t tokens, int max_groups, int win) {
  if (tokens <= 0) return 0;
  if (tokens < 2 * static_cast<std::int64_t>(win)) return 1;
  int rule;
  if (tokens < 2048) {
    rule = 2;
  } else if (tokens < 16384) {
    rule = 3;
  } else {
    std::int64_t k = tokens / 1024;
    int log2k = 0;
    while (k > 1) {
      k >>= 1;
      ++log2k;
    }
    rule = log2k + 2;
  }
  return rule < max_groups ? rule : max_groups;
}

// ---- Rule 6: stored range endpoints have no negative zero -------------------------------
DGQ_HD float canonical_zero(float v) { return v == 0.0f ? 0.0f : v; }

// ---- Rule 7: codes ----------------------------------------------------------------------
inline constexpr int kLevels = 253;      // q in [0, 253]
inline constexpr int kCodeOffset = 127;  // code = q - 127 in [-127, 126]
inline constexpr std::int8_t kMarkerHigh = 127;
inline constexpr std::int8_t kMarkerLow = -128;
inline constexpr std::int8_t kFlatCode = -127;

// inv = 253/(hi - lo); 0 when the range is flat (hi == lo) or too narrow for fp32
// (253/(hi - lo) overflows), so that every code becomes -127 without a branch per element.
DGQ_HD float code_inverse_step(float lo, float hi) {
  if (hi == lo) return 0.0f;
  const float inv = 253.0f / (hi - lo);
  return inv == INFINITY ? 0.0f : inv;
}

DGQ_HD std::int8_t quantize_code(float x, float lo, float inv) {
  float q = rintf((x - lo) * inv);  // round half to even (default rounding mode)
  q = fminf(fmaxf(q, 0.0f), 253.0f);
  return static_cast<std::int8_t>(static_cast<int>(q) - kCodeOffset);
}

DGQ_HD float dequant_scale(float lo, float hi) { return (hi - lo) / 253.0f; }

DGQ_HD float dequantize_code(std::int8_t code, float lo, float scale) {
  return fmaf(static_cast<float>(static_cast<int>(code) + kCodeOffset), scale, lo);
}

// ---- Rule 8: in-band segment markers on channel 0 ----------------------------------------
DGQ_HD std::int8_t inband_mark(std::int8_t code) { return code >= 0 ? kMarkerHigh : kMarkerLow; }
DGQ_HD bool is_inband_marker(std::int8_t code) { return code == kMarkerHigh || code == kMarkerLow; }
DGQ_HD std::int8_t inband_unmark(std::int8_t code) {
  if (code == kMarkerHigh) return 126;
  if (code == kMarkerLow) return -127;
  return code;
}

// ---- Rotation (scheme modifier `rot=hadamard`, docs/spec.md "Hadamard rotation") ----------
// Block size of llama.cpp's rotation (src/llama-kv-cache.cpp build_input_k_rot/_v_rot): for K
// the largest power of two n >= 64 dividing head_dim, for V always 64; 0 when head_dim is not
// a multiple of 64 (no rotation defined).
DGQ_HD int hadamard_block(std::int64_t head_dim, bool key) {
  if (head_dim <= 0 || head_dim % 64 != 0) return 0;
  if (!key) return 64;
  int n = 64;
  while (head_dim % (2 * static_cast<std::int64_t>(n)) == 0) n *= 2;
  return n;
}

// One butterfly of the fast Walsh-Hadamard transform: (a, b) -> (a + b, a - b), fp32. The
// transform is log2(n) stages h = 1, 2, 4, ..., n/2; stage h pairs j and j + h for every j
// with (j & h) == 0, in any order (the pairs of a stage are disjoint, so the order does not
// change a bit). After the last stage the block holds H_n x unnormalised (Sylvester order,
// H[i][j] = (-1)^popcount(i & j)).
DGQ_HD void hadamard_butterfly(float& a, float& b) {
  const float s = a + b;
  const float d = a - b;
  a = s;
  b = d;
}

// The normalisation 1/sqrt(n), applied once per element after the last stage (one fp32
// multiply). For n = 4^k it is the power of two 2^-k (exact); otherwise 2^-k times fp32(1/sqrt 2)
// = 0x3f3504f3, also exact: no sqrt is evaluated, so host and device agree by construction.
DGQ_HD float hadamard_scale(int n) {
  int log2n = 0;
  while ((1 << log2n) < n) ++log2n;
  const float pow2 = ldexpf(1.0f, -(log2n / 2));
  return (log2n % 2 == 0) ? pow2 : pow2 * bits_float(0x3f3504f3u);
}

// ---- TurboQuant (scheme `turboquant`, docs/spec.md "TurboQuant") -----------------------------
// The random signs of its rotation come from SplitMix64 (Steele, Lea, Flood 2014): a fixed
// integer recurrence, so every platform draws the same rotation from the same seed.
DGQ_HD std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Index of u's codebook cell: the number of cell edges <= u (an edge belongs to the upper cell).
DGQ_HD int codebook_cell(float u, const float* boundaries, int edges) {
  int idx = 0;
  for (int k = 0; k < edges; ++k) idx += u >= boundaries[k] ? 1 : 0;
  return idx;
}

}  // namespace dgq::rules

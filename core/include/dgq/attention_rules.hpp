#pragma once
// The scalar rules of decode attention on a stored cache (cpu/'s decode_attention): the exp of
// the softmax, the fixed reduction trees and the merge of two partial softmaxes. Every backend
// and the tests' scalar twin compute through these, so that a result is the same bits whatever
// the vector width or the thread count. Loops live in the backends. -ffp-contract=off
// (-fmad=false): every fma here is explicit.
#include <cmath>
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/host_device.hpp"

namespace dgq::attention_rules {

// The cache is cut into chunks of this many tokens (the last one shorter); each chunk's partial
// softmax is computed alone and the chunks are merged in token order. The chunk, not the
// thread, is the unit of work, so the bits do not depend on how many threads run it.
inline constexpr std::int64_t kChunkTokens = 256;

// A dot product of q and k (head_dim a multiple of 32) runs in 2 x 8 lane accumulators:
// element d goes to accumulator (d / 8) % 2, lane d % 8, in increasing d, each step an fma.
// Two chains per query head, and a GQA group of 4 scored at once, keep 8 FMAs in flight with
// each K block dequantized once for the group (2 x 4 accumulators + 4 block registers fit
// AVX2's 16). Then acc0 + acc1, and the 8 lanes by lane_tree_sum8.
inline constexpr int kDotLanes = 8;
inline constexpr int kDotAccumulators = 2;

// The 8 lanes of an AVX register summed in the order its halving reduction takes:
// (l0+l4, l1+l5, l2+l6, l3+l7) -> (s0+s2, s1+s3) -> their sum.
DGQ_HD float lane_tree_sum8(const float* l) {
  const float s0 = l[0] + l[4], s1 = l[1] + l[5], s2 = l[2] + l[6], s3 = l[3] + l[7];
  return (s0 + s2) + (s1 + s3);
}

// exp(x) for x <= 0 without a library call (no libm's rounding in the semantics): Cody-Waite
// reduction x = n ln2 + r with |r| <= ln2/2, Cephes' degree-7 polynomial for e^r (relative
// error ~1e-7 over the range), then the exponent 2^n set directly. Below kExpFloor the result
// is 0: a token 87 logits below the chunk's maximum weighs < 2^-125 of it, and 2^n stays normal.
inline constexpr float kExpFloor = -87.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;  // exact in 9 bits: n * kLn2Hi is exact
inline constexpr float kLn2Lo = -2.12194440e-4f;
// Coefficient i of the polynomial, highest degree first. A function rather than a namespace-scope
// array: CUDA device code cannot read a host array.
DGQ_HD constexpr float exp_poly(int i) {
  constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  return kExpPoly[i];
}

DGQ_HD float softmax_exp(float x) {
  if (!(x >= kExpFloor)) return 0.0f;
  const float n = rintf(x * kLog2e);  // nearest even, as the vector round instruction
  float r = fmaf(n, -kLn2Hi, x);
  r = fmaf(n, -kLn2Lo, r);
  float p = exp_poly(0);
  for (int i = 1; i < 6; ++i) p = fmaf(p, r, exp_poly(i));
  const float y = fmaf(p, r * r, r) + 1.0f;
  return y * rules::bits_float(static_cast<std::uint32_t>(static_cast<int>(n) + 127) << 23);
}

// The model runner's exponential (the blocked prefill attention of `dgq eval`, sim/model): the
// constants and polynomial of softmax_exp, computed without fma, with n = floor(x log2e + 1/2),
// a NaN passed through and x > 0 taken as 0. It is older than softmax_exp and differs from it
// in the last bit on about 0.1 % of [-87, 0] (the fma and the rounding of n); it is kept as it is
// because every `dgq eval` figure was computed with it. Within 2 ulp of exp on [-87, 0]
// (tests/sim/test_softmax_exp.cpp); its 8-lane twin is sim/model's softmax_exp8.
DGQ_HD float prefill_softmax_exp(float x) {
  if (x != x) return x;
  if (x < kExpFloor) return 0.0f;
  if (x > 0.0f) x = 0.0f;
  const float n = floorf(x * kLog2e + 0.5f);
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float y = exp_poly(0);
  for (int i = 1; i < 6; ++i) y = y * r + exp_poly(i);
  y = y * (r * r) + r + 1.0f;
  return y * rules::bits_float(static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23);
}

// The weight that rescales a partial softmax whose maximum was m to the common maximum
// m_new >= m: exp(m - m_new).
DGQ_HD float rescale_weight(float m, float m_new) { return softmax_exp(m - m_new); }

// Merge of the running sum l (weight a) with a chunk's sum lc (weight b): lc * b + l * a,
// one rounding for the product l * a and one for the fma. The accumulators merge the same way.
DGQ_HD float merge_step(float running, float a, float chunk, float b) { return fmaf(chunk, b, running * a); }

}  // namespace dgq::attention_rules

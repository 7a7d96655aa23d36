// iq4_nl: ggml's quantize_row_iq4_nl_ref (ggml-quants.c; the CPU from_float of GGML_TYPE_IQ4_NL)
// and dequantize_row_iq4_nl. At run time ggml calls quantize_row_iq4_nl_impl with ntry = -1
// and no importance weights, so of the general routine only this remains:
//   weights w_j = x_j^2; max = the value of largest |x| (first on ties);
//   if max |x| < 1e-15 (GROUP_MAX_EPS): d = 0, indices left as they were;
//   d0 = max / -127 (kvalues_iq4nl[0]); l_j = nearest grid index to x_j/d0 (best_index_int8);
//   d = sum w q x / sum w q^2 over the block (fp32, j in order; 0 if the denominator is 0),
//   stored as fp16. The scale search loop `for itry in [-ntry, ntry]` is empty for ntry = -1
//   (quantize_iq4_nl, the offline quantizer, uses ntry = 7 and importance weights; the cache
//   does not), and the indices are not recomputed from the final d (that needs ntry > 0).
#include <cmath>
#include <cstring>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::ggml {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // GROUP_MAX_EPS

// ggml's best_index_int8(16, kvalues_iq4nl, x): x <= val[0] -> 0, x >= val[15] -> 15, else the
// binary search's bracket val[ml] <= x < val[ml+1] and the nearer of the two, an exact
// midpoint going to the upper one (`x - val[mu-1] < val[mu] - x ? mu-1 : mu`). Here ml is
// counted instead of searched (no unpredictable branches): ml = #{k : val[k] <= x} - 1,
// clamped to [0, 14], which is the search's ml inside the grid and gives 0 below it and 15
// above it through the same comparison.
constexpr float kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

int grid_values_at_most(float x) {
  int count = 0;
  for (int k = 0; k < 16; ++k) count += kGrid[k] <= x ? 1 : 0;
  return count;
}

[[maybe_unused]] int best_index(float x) {  // the rule for one value
  const int count = grid_values_at_most(x);
  const int ml = count < 1 ? 0 : (count > 15 ? 14 : count - 1);
  return x - kGrid[ml] < kGrid[ml + 1] - x ? ml : ml + 1;
}

// indices[j] = best_index(id * x[j]) for the block.
void grid_indices(const float* x, float id, std::uint8_t* indices) {
  for (int j = 0; j < kBlockValues; ++j) indices[j] = static_cast<std::uint8_t>(best_index(id * x[j]));
}

}  // namespace

bool quantize_iq4_nl(const float* x, BlockIQ4NL& b, std::uint8_t (&indices)[kBlockValues]) {
  return quantize_iq4_nl_with(grid_indices, x, b, indices);
}

bool quantize_iq4_nl_with(IQ4NLGridIndices grid_indices, const float* x, BlockIQ4NL& b,
                          std::uint8_t (&indices)[kBlockValues]) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  float d = 0.0f;
  if (!(amax < kGroupMaxEps)) {
    const float d0 = max / static_cast<float>(kIQ4NLValues[0]);
    const float id = 1.0f / d0;
    grid_indices(x, id, indices);
    float sumqx = 0.0f, sumq2 = 0.0f;
    for (int j = 0; j < kBlockValues; ++j) {
      const float q = kGrid[indices[j]];
      const float w = x[j] * x[j];
      sumqx += w * q * x[j];  // (w*q)*x, rounded, then added: no fma, as ggml
      sumq2 += w * q * q;
    }
    d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
  }
  b.d = rules::float_to_half(d);
  for (int j = 0; j < kBlockValues / 2; ++j) {
    b.qs[j] = static_cast<std::uint8_t>(indices[j] | (indices[j + 16] << 4));
  }
  return (b.d & 0x7c00u) != 0x7c00u;
}

void dequantize_iq4_nl(const BlockIQ4NL& b, float* out) {
  const float d = rules::half_to_float(b.d);
  for (int j = 0; j < kBlockValues / 2; ++j) {
    out[j] = d * static_cast<float>(kIQ4NLValues[b.qs[j] & 0x0f]);
    out[j + 16] = d * static_cast<float>(kIQ4NLValues[b.qs[j] >> 4]);
  }
}

}  // namespace dgq::ggml

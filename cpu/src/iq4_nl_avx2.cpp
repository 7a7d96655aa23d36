// The fast table's iq4_nl block: the reference's rule (reference/src/schemes/iq4_nl_block.cpp)
// with the grid search eight values at a time (AVX2).
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
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::ggml {
using dgq::ggml::BlockIQ4NL;
using dgq::ggml::kBlockValues;
using dgq::ggml::kIQ4NLValues;
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
#if defined(__AVX2__)
  const __m256 v = _mm256_set1_ps(x);
  const int lo = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(kGrid), v, _CMP_LE_OQ));
  const int hi = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(kGrid + 8), v, _CMP_LE_OQ));
  return __builtin_popcount(static_cast<unsigned>(lo | (hi << 8)));
#else
  int count = 0;
  for (int k = 0; k < 16; ++k) count += kGrid[k] <= x ? 1 : 0;
  return count;
#endif
}

[[maybe_unused]] int best_index(float x) {  // the scalar path (non-AVX2 builds)
  const int count = grid_values_at_most(x);
  const int ml = count < 1 ? 0 : (count > 15 ? 14 : count - 1);
  return x - kGrid[ml] < kGrid[ml + 1] - x ? ml : ml + 1;
}

#if defined(__AVX2__)
// kGrid[idx] for 8 indices in [0, 15].
__m256 grid_lookup(__m256i idx) {
  const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kGrid), idx);
  const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kGrid + 8), idx);
  return _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7))));
}

// best_index for 8 values at once: per lane the same count, clamp and comparison.
__m256i best_indices8(__m256 al) {
  __m256i count = _mm256_setzero_si256();
  for (int k = 0; k < 16; ++k) {  // a lane where kGrid[k] <= al is all ones (-1): subtracting counts it
    count = _mm256_sub_epi32(count, _mm256_castps_si256(_mm256_cmp_ps(_mm256_set1_ps(kGrid[k]), al, _CMP_LE_OQ)));
  }
  const __m256i ml = _mm256_min_epi32(_mm256_max_epi32(_mm256_sub_epi32(count, _mm256_set1_epi32(1)), _mm256_setzero_si256()),
                                      _mm256_set1_epi32(14));
  const __m256i mu = _mm256_add_epi32(ml, _mm256_set1_epi32(1));
  const __m256 lower_is_nearer = _mm256_cmp_ps(_mm256_sub_ps(al, grid_lookup(ml)), _mm256_sub_ps(grid_lookup(mu), al), _CMP_LT_OQ);
  return _mm256_add_epi32(mu, _mm256_castps_si256(lower_is_nearer));  // mu - 1 where the lower one wins
}
#endif

// indices[j] = best_index(id * x[j]) for the block.
void grid_indices(const float* x, float id, std::uint8_t* indices) {
#if defined(__AVX2__)
  const __m256 vid = _mm256_set1_ps(id);
  for (int j = 0; j < kBlockValues; j += 8) {
    alignas(32) std::int32_t l[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(l), best_indices8(_mm256_mul_ps(vid, _mm256_loadu_ps(x + j))));
    for (int k = 0; k < 8; ++k) indices[j + k] = static_cast<std::uint8_t>(l[k]);
  }
#else
  for (int j = 0; j < kBlockValues; ++j) indices[j] = static_cast<std::uint8_t>(best_index(id * x[j]));
#endif
}

}  // namespace

bool quantize_iq4_nl(const float* x, BlockIQ4NL& b, std::uint8_t (&indices)[kBlockValues]) {
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

}  // namespace dgq::cpu::ggml

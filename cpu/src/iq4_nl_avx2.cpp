// The fast table's iq4_nl block: the reference's block arithmetic (quantize_iq4_nl_with,
// reference/src/schemes/iq4_nl_block.cpp, where the rule is written out) with the grid search
// eight values at a time (AVX2).

#include "dgq/baselines/ggml_kv_types.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu::ggml {
using dgq::ggml::BlockIQ4NL;
using dgq::ggml::kBlockValues;
namespace {

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
  const __m256i ml = _mm256_min_epi32(
      _mm256_max_epi32(_mm256_sub_epi32(count, _mm256_set1_epi32(1)), _mm256_setzero_si256()), _mm256_set1_epi32(14));
  const __m256i mu = _mm256_add_epi32(ml, _mm256_set1_epi32(1));
  const __m256 lower_is_nearer =
      _mm256_cmp_ps(_mm256_sub_ps(al, grid_lookup(ml)), _mm256_sub_ps(grid_lookup(mu), al), _CMP_LT_OQ);
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
  return dgq::ggml::quantize_iq4_nl_with(grid_indices, x, b, indices);
}

}  // namespace dgq::cpu::ggml

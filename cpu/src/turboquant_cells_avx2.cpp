// The fast table's turboquant_cells.
#include <cmath>
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "fast_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu {

// rules::codebook_cell (the number of edges <= u) for a row: the count does not depend on the
// order of the comparisons, so AVX2 compares u with all (at most 15) edges at once.
void codebook_cells(const float* u, int d, const float* boundaries, int edges, std::uint8_t* cells) {
#if defined(__AVX2__)
  float padded[16];
  for (int k = 0; k < 16; ++k) padded[k] = k < edges ? boundaries[k] : INFINITY;  // never <= a finite u
  const __m256 lo = _mm256_loadu_ps(padded), hi = _mm256_loadu_ps(padded + 8);
  for (int j = 0; j < d; ++j) {
    const __m256 v = _mm256_set1_ps(u[j]);
    const unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(lo, v, _CMP_LE_OQ))) |
                          static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(hi, v, _CMP_LE_OQ))) << 8;
    cells[j] = static_cast<std::uint8_t>(__builtin_popcount(mask));
  }
#else
  for (int j = 0; j < d; ++j) cells[j] = static_cast<std::uint8_t>(rules::codebook_cell(u[j], boundaries, edges));
#endif
}

}  // namespace dgq::cpu

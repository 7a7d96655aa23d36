// The fast Walsh-Hadamard transform of dgq::hadamard_rotate_row, in the butterfly order the
// spec fixes (stages h = 1, 2, ..., n/2; scale once at the end).
#include <cassert>

#include "dgq/element_rules.hpp"
#include "dgq/rotation.hpp"

namespace dgq {
namespace {

void hadamard_block_in_place(float* x, int n, float scale) {
  for (int h = 1; h < n; h *= 2) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; ++j) rules::hadamard_butterfly(x[j], x[j + h]);
    }
  }
  for (int j = 0; j < n; ++j) x[j] *= scale;
}

}  // namespace

void hadamard_rotate_row(float* row, std::int64_t channels, int block) {
  assert(block >= 2 && (block & (block - 1)) == 0 && channels % block == 0);
  const float scale = rules::hadamard_scale(block);
  for (std::int64_t first = 0; first < channels; first += block) hadamard_block_in_place(row + first, block, scale);
}

}  // namespace dgq

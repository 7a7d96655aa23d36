// dgq::hadamard_rotate_row: per block the fast Walsh-Hadamard transform (dgq/fwht.hpp, the
// butterfly order the spec fixes), then the scale once.
#include <cassert>

#include "dgq/element_rules.hpp"
#include "dgq/fwht.hpp"
#include "dgq/rotation.hpp"

namespace dgq {
namespace {

void hadamard_block_in_place(float* x, int n, float scale) { fwht_scaled_in_place(x, n, scale); }

}  // namespace

void hadamard_rotate_row(float* row, std::int64_t channels, int block) {
  assert(block >= 2 && (block & (block - 1)) == 0 && channels % block == 0);
  const float scale = rules::hadamard_scale(block);
  for (std::int64_t first = 0; first < channels; first += block) hadamard_block_in_place(row + first, block, scale);
}

}  // namespace dgq

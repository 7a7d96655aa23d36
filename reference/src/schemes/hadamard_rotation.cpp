// dgq::hadamard_rotate_row: per block the fast Walsh-Hadamard transform (dgq/fwht.hpp, the
// butterfly order the spec fixes), then the scale once.
#include <cassert>

#include "dgq/element_rules.hpp"
#include "dgq/fwht.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"

namespace dgq {
void hadamard_rotate_row(float* row, std::int64_t channels, int block) {
  hadamard_rotate_row(kernels::reference_kernels(), row, channels, block);
}

void hadamard_rotate_row(const kernels::CpuKernels& k, float* row, std::int64_t channels, int block) {
  assert(block >= 2 && (block & (block - 1)) == 0 && channels % block == 0);
  const float scale = rules::hadamard_scale(block);
  for (std::int64_t first = 0; first < channels; first += block) k.fwht_scaled_in_place(row + first, block, scale);
}

}  // namespace dgq

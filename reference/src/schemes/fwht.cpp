// dgq::fwht_in_place: the butterfly rule of docs/spec.md written out, stage by stage (the
// reference's; cpu/src/fwht_avx2.cpp has the vectorized one, with the same bits by construction:
// a butterfly output is either a + b, commutative in IEEE arithmetic, or a - b with the same
// operands in the same order).
#include "dgq/fwht.hpp"

#include "dgq/element_rules.hpp"

namespace dgq {

void fwht_in_place_scalar(float* x, int n) {
  for (int h = 1; h < n; h *= 2) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; ++j) rules::hadamard_butterfly(x[j], x[j + h]);
    }
  }
}

void fwht_in_place(float* x, int n) { fwht_in_place_scalar(x, n); }

void fwht_scaled_in_place(float* x, int n, float scale) {
  fwht_in_place(x, n);
  for (int j = 0; j < n; ++j) x[j] *= scale;
}

}  // namespace dgq

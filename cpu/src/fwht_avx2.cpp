// The fast table's fwht_in_place: AVX2 for n >= 8 (stages 1, 2, 4 inside a register by permute + add/sub +
// blend, then whole registers), the literal rule otherwise. Same bits by construction: a
// butterfly output is either a + b (commutative in IEEE arithmetic) or a - b with the same
// operands in the same order.
#include "dgq/fwht.hpp"  // fwht_in_place_scalar, for n < 8
#include "fast_kernels.hpp"

#include "dgq/element_rules.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace dgq::cpu {

#if defined(__AVX2__)
namespace {

// Stages h = 1, 2, 4 on x[0..8): with p the partner of each element (its neighbour at
// distance h), the lower element of a pair takes v + p and the upper one p - v (= a - b).
inline __m256 first_three_stages(__m256 v) {
  __m256 p = _mm256_permute_ps(v, 0xB1);  // [1,0,3,2]
  v = _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xAA);
  p = _mm256_permute_ps(v, 0x4E);  // [2,3,0,1]
  v = _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xCC);
  p = _mm256_permute2f128_ps(v, v, 0x01);  // swap halves
  return _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xF0);
}

// The whole transform of a block of 8*N floats in N registers (N = 8, 16: blocks of 64 and
// 128, the head dims that matter), then x <- scale * result. Same butterflies, same order of
// stages as the memory version below; only the loads and stores between stages are gone.
template <int N>
void fwht_registers(float* x, float scale) {
  __m256 v[N];
  for (int i = 0; i < N; ++i) v[i] = first_three_stages(_mm256_loadu_ps(x + 8 * i));
  for (int m = 1; m < N; m *= 2) {
    for (int i = 0; i < N; ++i) {
      if ((i & m) == 0) {
        const __m256 a = v[i], b = v[i + m];
        v[i] = _mm256_add_ps(a, b);
        v[i + m] = _mm256_sub_ps(a, b);
      }
    }
  }
  const __m256 s = _mm256_set1_ps(scale);
  for (int i = 0; i < N; ++i) _mm256_storeu_ps(x + 8 * i, _mm256_mul_ps(v[i], s));
}

}  // namespace

void fwht_scaled_in_place(float* x, int n, float scale) {
  if (n == 64) return fwht_registers<8>(x, scale);
  if (n == 128) return fwht_registers<16>(x, scale);
  fwht_in_place(x, n);
  for (int j = 0; j < n; ++j) x[j] *= scale;
}

void fwht_in_place(float* x, int n) {
  if (n < 8) return fwht_in_place_scalar(x, n);
  for (int i = 0; i < n; i += 8) _mm256_storeu_ps(x + i, first_three_stages(_mm256_loadu_ps(x + i)));
  for (int h = 8; h < n; h *= 2) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; j += 8) {
        const __m256 a = _mm256_loadu_ps(x + j), b = _mm256_loadu_ps(x + j + h);
        _mm256_storeu_ps(x + j, _mm256_add_ps(a, b));
        _mm256_storeu_ps(x + j + h, _mm256_sub_ps(a, b));
      }
    }
  }
}
#else
void fwht_in_place(float* x, int n) { fwht_in_place_scalar(x, n); }

void fwht_scaled_in_place(float* x, int n, float scale) {
  fwht_in_place(x, n);
  for (int j = 0; j < n; ++j) x[j] *= scale;
}
#endif

}  // namespace dgq::cpu

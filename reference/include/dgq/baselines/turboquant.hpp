#pragma once
// TurboQuant_mse (Zandieh, Daliri, Hadian, Mirrokni, arXiv 2504.19874, Algorithm 1), the pieces
// the scheme `turboquant:bits=b,seed=s` is made of: a random orthogonal rotation drawn from a
// seed, a per-token L2 norm, and the Lloyd-Max codebook of the rotated coordinates
// (tools/turboquant-codebook.py). docs/schemes.md cites the paper; docs/spec.md fixes the bits.
#include <cstdint>
#include <vector>

#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::turboquant {

// Pi = (1/d) H D2 H D1: H the unnormalised Walsh-Hadamard matrix of order d (H H = d I), D1 and
// D2 diagonal matrices of random signs (SplitMix64 from `stream`: D1's signs are the bits of
// the first ceil(d/64) outputs, bit j%64 of output j/64 set -> -1; D2's of the next ones).
// Orthogonal, applied in O(d log d) with exact sign flips and one exact power-of-two scale.
class Rotation {
 public:
  // d a power of two >= 2.
  // k: whose Walsh-Hadamard transform forward/inverse use (the reference's by default).
  Rotation(int d, std::uint64_t stream, const kernels::CpuKernels& k = kernels::reference_kernels());
  int dim() const { return d_; }
  void forward(float* x) const;  // x <- Pi x
  void inverse(float* x) const;  // x <- Pi^T x
  const std::vector<float>& signs1() const { return s1_; }
  const std::vector<float>& signs2() const { return s2_; }

 private:
  int d_;
  std::vector<float> s1_, s2_;
  const kernels::CpuKernels* k_;
};

// The rotation stream of a (seed, role): seed * 2 + (0 for K, 1 for V).
std::uint64_t rotation_stream(std::uint32_t seed, bool key);

// TurboQuant_prod's QJL matrix S (d x d, row-major fp32, entries i.i.d. N(0, 1)), drawn from
// SplitMix64 state `stream` with Marsaglia's polar method in float64: u, v = 2*U - 1 with U the
// top 53 bits of an output times 2^-53, rejected unless 0 < s = u^2 + v^2 < 1, then
// u*f and v*f with f = sqrt(-2*log(s)/s) fill the next two entries. log is
// deterministic_log, not the C library's, so every platform draws the same matrix.
std::vector<float> qjl_matrix(int d, std::uint64_t stream);

// The stream of S for a (seed, role): rotation_stream(seed, key) with bit 62 set.
std::uint64_t qjl_stream(std::uint32_t seed, bool key);

// log(s) for finite s > 0 in float64 with a fixed sequence of IEEE operations: s = m*2^e
// (frexp, exact; m moved to [sqrt(1/2), sqrt(2))), log(m) = 2*atanh(t), t = (m-1)/(m+1),
// by the series sum_{k<20} t^(2k+1)/(2k+1) in Horner form, plus e*log(2). Within a few ulp of
// the exact value (|t| < 0.172, so the series' remainder is below 2^-100).
double deterministic_log(double s);

struct CodebookView {
  const float* centroids;   // 2^bits ascending
  const float* boundaries;  // 2^bits - 1 ascending
  int bits;
  double dmse;  // d * C(f_X, b) from the script
};

// The pinned codebook for dimension d (16, 32, ..., 512) and bits (1..4); nullptr-centroids
// when none is pinned.
CodebookView codebook(int d, int bits);

}  // namespace dgq::turboquant

// TurboQuant's rotation and codebook lookup (dgq/baselines/turboquant.hpp).
#include <cassert>

#include "dgq/baselines/turboquant.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/fwht.hpp"
#include "schemes/turboquant_codebooks.hpp"

namespace dgq::turboquant {
namespace {

std::vector<float> draw_signs(int d, std::uint64_t& state) {
  std::vector<float> s(static_cast<std::size_t>(d));
  std::uint64_t word = 0;
  for (int j = 0; j < d; ++j) {
    if (j % 64 == 0) word = rules::splitmix64_next(state);
    s[j] = (word >> (j % 64)) & 1u ? -1.0f : 1.0f;
  }
  return s;
}

}  // namespace

Rotation::Rotation(int d, std::uint64_t stream, const kernels::CpuKernels& k) : d_(d), k_(&k) {
  assert(d >= 2 && (d & (d - 1)) == 0);
  std::uint64_t state = stream;
  s1_ = draw_signs(d, state);
  s2_ = draw_signs(d, state);
}

void Rotation::forward(float* x) const {
  const float scale = 1.0f / static_cast<float>(d_);  // a power of two: exact
  for (int j = 0; j < d_; ++j) x[j] *= s1_[j];
  k_->fwht_in_place(x, d_);
  for (int j = 0; j < d_; ++j) x[j] *= s2_[j];
  k_->fwht_in_place(x, d_);
  for (int j = 0; j < d_; ++j) x[j] *= scale;
}

void Rotation::inverse(float* x) const {
  const float scale = 1.0f / static_cast<float>(d_);
  k_->fwht_in_place(x, d_);
  for (int j = 0; j < d_; ++j) x[j] *= s2_[j];
  k_->fwht_in_place(x, d_);
  for (int j = 0; j < d_; ++j) x[j] *= s1_[j] * scale;  // sign times power of two: exact
}

std::uint64_t rotation_stream(std::uint32_t seed, bool key) {
  return static_cast<std::uint64_t>(seed) * 2u + (key ? 0u : 1u);
}

CodebookView codebook(int d, int bits) {
  for (const Codebook& c : kCodebooks) {
    if (c.dim == d && c.bits == bits) return {c.centroids, c.boundaries, c.bits, c.dmse};
  }
  return {nullptr, nullptr, bits, 0.0};
}

}  // namespace dgq::turboquant

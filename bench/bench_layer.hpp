#pragma once
// The layer both CPU benchmarks time (dgq-bench and bench/ggml's dgq-ggml-bench): KV-like fp16
// values, uniform per element with an amplitude step at a third of the tokens so DGQ finds
// segments (splitmix64, as in the tests). One definition, so the two benchmarks time the same
// bytes.
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/tensor.hpp"

namespace dgq::bench {

inline Tensor3 make_bench_layer(std::int64_t heads, std::int64_t tokens, std::int64_t head_dim) {
  Tensor3 layer(DType::f16, heads, tokens, head_dim);
  std::uint64_t state = 0x5eed;
  auto* h = reinterpret_cast<std::uint16_t*>(layer.storage.data());
  const std::int64_t n = heads * tokens * head_dim;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const std::int64_t t = (i / head_dim) % tokens;
    const float amplitude = t < tokens / 3 ? 1.0f : 6.0f;
    h[i] = rules::float_to_half((static_cast<float>(z >> 40) * 0x1p-24f * 2.0f - 1.0f) * amplitude);
  }
  return layer;
}

}  // namespace dgq::bench

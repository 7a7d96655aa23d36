#pragma once
// The literal decoder: the forward pass (forward.hpp) over tokens written into the cache as
// they come, a micro-batch at a time, as llama.cpp decodes.
#include <cstdint>
#include <span>
#include <vector>

#include "dgq/sim/model/forward.hpp"

namespace dgq::sim {

// The cache of a decoder that writes tokens as they come (one micro-batch at a time): append()
// gets a micro-batch's K/V of one layer, [num_kv_heads][m][head_dim] fp32; read() gives every
// token's K/V as the cache holds them now, [num_kv_heads][tokens so far][head_dim], the keys
// rotated (a pre-RoPE cache gets them unrotated and rotates what it reads with rope_keys, as
// KvCacheHook). queries() as KvCacheHook's, for the micro-batch's queries.
class DecoderCache {
 public:
  virtual ~DecoderCache() = default;
  virtual KeyPosition key_position() const { return KeyPosition::post_rope; }
  virtual void append(std::int64_t layer, std::int64_t tokens, const std::vector<float>& k,
                      const std::vector<float>& v) = 0;
  virtual void read(std::int64_t layer, std::vector<float>& k, std::vector<float>& v, const RopeKeys& rope_keys) = 0;
  virtual void queries(std::int64_t /*layer*/, std::int64_t /*tokens*/, std::vector<float>& /*q*/) {}
};

// The literal decoder: tokens in micro-batches of `ubatch` (llama.cpp's semantics: a micro-batch
// is written into the cache, then its queries attend to the cache including itself, causally
// masked); ubatch 1 is token by token. Returns the logits of rows first_row..n-1 as forward_logits.
std::vector<float> decode_logits(const Model& model, std::span<const std::int32_t> tokens, DecoderCache& cache,
                                 std::int64_t first_row, std::int64_t ubatch,
                                 Arithmetic arithmetic = Arithmetic::blocked);

}  // namespace dgq::sim

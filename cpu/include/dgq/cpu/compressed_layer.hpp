#pragma once
// A layer's compressed K and V heads (Scheme::compress results, one per KV head) as decode
// attention reads them: what dgq's users hold, turned into the kernel's StoredKv without
// decompressing anything. Each head is read by read_stored_head (dgq/cpu/stored_head.hpp),
// through its family's stored layout.
// An unreadable family, a modifier the kernel does not read, or heads that disagree (schemes,
// shapes, dtypes) are refused with std::invalid_argument naming the head; corrupt parts throw
// InputError. The Compressed heads must outlive the layer (the kernel reads their parts in place).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/scheme.hpp"

namespace dgq::cpu {

class CompressedLayer {
 public:
  CompressedLayer(std::span<const Compressed* const> k_heads, std::span<const Compressed* const> v_heads);
  CompressedLayer(std::span<const Compressed> k_heads, std::span<const Compressed> v_heads);

  const StoredKv& cache() const { return cache_; }
  // The decode step's shape for `group` query heads per KV head (GQA).
  DecodeAttentionShape shape(int group) const;

  // out[kv_heads * group][head_dim] for q[kv_heads * group][head_dim]: decode_attention on the
  // stored heads with `threads` threads.
  void attend(const float* q, int group, float scale, float* out, int threads = 1) const;

 private:
  StoredKv cache_;
  std::vector<std::unique_ptr<SpanRanges>> ranges_;  // owned, pointed at by cache_
  int head_dim_ = 0;
  std::int64_t tokens_ = 0;
};

}  // namespace dgq::cpu

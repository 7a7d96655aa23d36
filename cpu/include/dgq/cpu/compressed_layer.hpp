#pragma once
// A layer's compressed K and V heads (Scheme::compress results, one per KV head) as decode
// attention reads them: what dgq's users hold, turned into the kernel's StoredKv without
// decompressing anything. Each head is read by its scheme's family:
//   q8_0, q4_0, iq4_nl: part "blocks" (with rot=hadamard: in the rotated basis);
//   dgq: its codes and segment ranges (dgq_segment_ranges);
//   dgq2, kivi-2/4, turboquant, vLLM's Lloyd-Max presets: uniform_codes_head (raw rows, slots,
//   codebooks and rotations included).
// Any other family, a modifier the kernel does not read, or heads that disagree (schemes,
// shapes, dtypes) are refused with std::invalid_argument naming the head; corrupt parts throw
// InputError. The Compressed heads must outlive the layer (the kernel reads their parts in place).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/scheme.hpp"

namespace dgq::cpu {

// One compressed head as decode attention reads it, by its family (the readers above): its
// format, codes (into c's parts), basis, ranges, raw rows and row stride. CompressedLayer reads
// every head through it; so does the decode bench (bench/ggml/decode_side_by_side.cpp).
struct StoredHead {
  KvBlockFormat format = KvBlockFormat::q8_0;
  const std::uint8_t* codes = nullptr;
  bool rotated = false;                   // rot=hadamard (StoredKv::k_rotated / v_rotated)
  std::function<void(float*)> rotation;   // another rotation (TurboQuant's Pi, vLLM's WHT)
  DgqSegmentRanges ranges;                // formats with ranges (kv_format_has_ranges)
  const std::uint8_t* raw = nullptr;      // raw_tokens rows after the codes
  std::int64_t raw_tokens = 0, row_stride = 0;
};
StoredHead read_stored_head(const Compressed& c);

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
  std::vector<std::unique_ptr<DgqSegmentRanges>> ranges_;  // owned, pointed at by cache_
  int head_dim_ = 0;
  std::int64_t tokens_ = 0;
};

}  // namespace dgq::cpu

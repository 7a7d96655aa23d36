#pragma once
// Decode attention on a stored cache: one new query per head against L cached tokens whose K and
// V are ggml blocks (q8_0, q4_0, iq4_nl: what those schemes store as part "blocks" for one
// [tokens][head_dim] head) or DGQ v1's codes (`dgq`, granularity=segment or segment-channel: part "codes", one int8
// per element, with each segment's range), read and dequantized in registers inside the loop,
// never decompressed to a buffer. GQA: query head h reads KV head h / group (ggml_flash_attn_ext's
// broadcast). Softmax over scale * q.k, fp32 throughout.
//
// Order (dgq/attention_rules.hpp): the tokens are cut into chunks of kChunkTokens; per chunk and
// query head, scores, the chunk's maximum m, p_t = exp(s_t - m), l = sum p_t (8 lanes, t % 8)
// and acc = sum p_t v_t (token order, fma); the chunks are then merged in token order and
// out = acc / l. Work items are (KV head, chunk) and every one of them serves the whole GQA
// group, so each block is read once per step; the bits do not depend on the thread count.
#include <cstdint>
#include <vector>

#include "dgq/scheme.hpp"

namespace dgq::cpu {

enum class KvBlockFormat : std::uint8_t { q8_0, q4_0, iq4_nl, dgq };
int kv_block_bytes(KvBlockFormat f);  // 34, 18, 18, 32 (32 values each; dgq's are its codes only)
const char* kv_block_format_name(KvBlockFormat f);

// What a `dgq` head needs beside its codes: the segment edges [0, e1, ..., L] and each segment's
// lo and scale (docs/spec.md rules 6-8: rules::dequant_scale), one per segment
// (granularity=segment, channels = 1) or one per segment and channel (segment-channel,
// channels = head_dim; lo[s * channels + c]), and whether the values decode to fp16 (the input
// dtype: rule 7 rounds to it) or stay fp32. A value is fmaf(code + 127, scale, lo), rounded to
// fp16 when `f16`, bit for bit what Scheme::decompress writes (in-band markers decoded as rule
// 8's inband_unmark does).
struct DgqSegmentRanges {
  std::vector<std::uint32_t> edges;
  std::vector<float> lo, scale;
  int channels = 1;
  bool f16 = true;
};
// From a `dgq` scheme's compressed head (granularity segment or segment-channel, any markers,
// fp16 or fp32 input):
// the ranges above and a pointer to its codes (into c, which must outlive it). Throws
// std::invalid_argument for another family, InputError for corrupt parts.
DgqSegmentRanges dgq_segment_ranges(const Compressed& c, const std::uint8_t** codes);

struct DecodeAttentionShape {
  int kv_heads = 1;
  int group = 1;       // query heads per KV head (GQA); 1 = multi-head attention
  int head_dim = 128;  // a positive multiple of 32
  std::int64_t tokens = 1;
  int query_heads() const { return kv_heads * group; }
};

// One layer's stored K and V: k[h] and v[h] point at KV head h's tokens x head_dim/32 blocks.
// k_rotated / v_rotated: stored with the scheme modifier rot=hadamard (K's block
// rules::hadamard_block(head_dim, key), V's 64); the query is rotated with K's blocks (q.k is
// (Hq).(Hk)) and the output rotated back once with V's.
struct StoredKv {
  KvBlockFormat format = KvBlockFormat::q8_0;
  std::vector<const std::uint8_t*> k, v;
  bool k_rotated = false, v_rotated = false;
  // format dgq only: head h's segment ranges (k_ranges[h] for k[h], v_ranges[h] for v[h]).
  std::vector<const DgqSegmentRanges*> k_ranges, v_ranges;
};

// best: AVX2/FMA where compiled in, else scalar. scalar: the scalar loops of the same order
// (the non-AVX2 build's path), selectable so that the tests check it on any machine.
enum class DecodePath : std::uint8_t { best, scalar };
bool decode_attention_vectorized();  // whether `best` is the AVX2 path in this build

// A decode step planned once for a shape and run as independent work items, so that a caller
// with its own thread pool (the ggml bench's OpenMP) can drive it:
//   set_query(q); run_chunk(i) for every i < chunk_items() (any threads, any order);
//   merge_head(h) for every h < query_heads() (any threads); then output() holds the result.
// decode_attention() below does all of that with std::threads.
class DecodeAttention {
 public:
  // Throws std::invalid_argument for a shape or cache that does not fit (head_dim, null
  // pointers, a rotation with head_dim not a multiple of 64).
  DecodeAttention(const StoredKv& cache, const DecodeAttentionShape& shape, float scale,
                  DecodePath path = DecodePath::best);

  void set_query(const float* q);  // q[query_heads][head_dim]
  std::int64_t chunk_items() const { return static_cast<std::int64_t>(shape_.kv_heads) * chunks_; }
  void run_chunk(std::int64_t item);
  void merge_head(int query_head);
  const float* output() const { return out_.data(); }  // [query_heads][head_dim]

 private:
  StoredKv cache_;
  DecodeAttentionShape shape_;
  float scale_;
  DecodePath path_;
  std::int64_t chunks_, row_bytes_;
  std::vector<float> q_;                 // [query_heads][head_dim], rotated if K is
  std::vector<float> chunk_max_, chunk_sum_;  // [kv_head][chunk][group]
  std::vector<float> chunk_acc_;         // [kv_head][chunk][group][head_dim]
  std::vector<float> out_;
};

// out[query_heads][head_dim] for q[query_heads][head_dim], with `threads` std::threads (>= 1).
void decode_attention(const StoredKv& cache, const DecodeAttentionShape& shape, const float* q, float scale,
                      float* out, int threads, DecodePath path = DecodePath::best);

}  // namespace dgq::cpu

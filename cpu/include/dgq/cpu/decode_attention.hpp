#pragma once
// Decode attention on a stored cache: one new query per head against L cached tokens whose K and
// V are ggml blocks (q8_0, q4_0, iq4_nl: what those schemes store as part "blocks" for one
// [tokens][head_dim] head), DGQ v1's codes (`dgq`, granularity=segment or segment-channel: part
// "codes", one int8 per element, with each segment's range), the unsigned b-bit codes of dgq2
// and KIVI (`uniform2` .. `uniform8`: part "codes", with each span's range; K and V may differ in
// width) or TurboQuant's codebook codes (`codebook2` .. `codebook4`, with each token's norm),
// read and dequantized in registers inside the loop,
// never decompressed to a buffer. GQA: query head h reads KV head h / group (ggml_flash_attn_ext's
// broadcast). Softmax over scale * q.k, fp32 throughout.
//
// Order (dgq/attention_rules.hpp): the tokens are cut into chunks of kChunkTokens; per chunk and
// query head, scores, the chunk's maximum m, p_t = exp(s_t - m), l = sum p_t (8 lanes, t % 8)
// and acc = sum p_t v_t (token order, fma); the chunks are then merged in token order and
// out = acc / l. Work items are (KV head, chunk) and every one of them serves the whole GQA
// group, so each block is read once per step; the bits do not depend on the thread count.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "dgq/cpu/span_ranges.hpp"
#include "dgq/stored_format.hpp"

namespace dgq::cpu {

// 34, 18, 18, 32, then 4 b for uniform b and codebook b (32 values each; dgq's, uniform's and
// codebook's are codes only).
int kv_block_bytes(StoredFormat f);
const char* kv_block_format_name(StoredFormat f);  // "q8_0", ..., "dgq", "uniform2", ...
// Whether a format's values come with per-token ranges (dgq, uniform*, codebook*) rather than
// block scales.
bool kv_format_has_ranges(StoredFormat f);

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
  StoredFormat format = StoredFormat::q8_0;  // K's, and V's unless v_format says otherwise
  // V's format when it differs from K's (only among the uniform and codebook formats: dgq2's
  // kbits/vbits, vLLM's presets' codebook keys and uniform values).
  std::optional<StoredFormat> v_format;
  // Bytes from one token's codes to the next's; 0: packed rows (head_dim / 32 blocks). More where
  // each token's codes open a slot with other fields (vLLM's presets: norm, scale, zero).
  std::int64_t k_row_stride = 0, v_row_stride = 0;
  StoredFormat value_format() const { return v_format.value_or(format); }
  std::vector<const std::uint8_t*> k, v;
  bool k_rotated = false, v_rotated = false;
  // Another rotation than the Hadamard blocks (TurboQuant's Pi): query_rotation(row) on each
  // query head's row before the step (K stored as Pi k: q.k = (Pi q).(Pi k)), output_rotation(row)
  // on each output row after it (V stored as Pi v: the output is Pi^T of the sum). Called from
  // set_query and merge_head, so from the caller's threads: they must be reentrant.
  std::function<void(float*)> query_rotation, output_rotation;
  // formats with ranges only (dgq, uniform*): head h's segment ranges (k_ranges[h] for k[h], v_ranges[h] for v[h]).
  std::vector<const SpanRanges*> k_ranges, v_ranges;
  // Raw rows: the last k_raw_tokens tokens of every K head (v_raw_tokens of every V head) are
  // head_dim values in the input dtype (raw_f16: fp16, else fp32) at k_raw[h] (v_raw[h]), not
  // codes; k[h] and the ranges cover the tokens before them (and may be null where none are
  // left). In the stored basis, as the codes: rotated where the role is.
  std::vector<const std::uint8_t*> k_raw, v_raw;
  std::int64_t k_raw_tokens = 0, v_raw_tokens = 0;
  bool raw_f16 = true;
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
  std::int64_t chunks_, k_row_bytes_, v_row_bytes_;
  std::vector<float> q_;                      // [query_heads][head_dim], rotated if K is
  std::vector<float> chunk_max_, chunk_sum_;  // [kv_head][chunk][group]
  std::vector<float> chunk_acc_;              // [kv_head][chunk][group][head_dim]
  std::vector<float> out_;
};

// out[query_heads][head_dim] for q[query_heads][head_dim], with `threads` std::threads (>= 1).
void decode_attention(const StoredKv& cache, const DecodeAttentionShape& shape, const float* q, float scale, float* out,
                      int threads, DecodePath path = DecodePath::best);

}  // namespace dgq::cpu

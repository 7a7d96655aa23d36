#pragma once
// One chunk of a decode step (decode_attention.cpp plans the chunks and merges them): the
// partial softmax of a GQA group of queries over up to kChunkTokens stored tokens, in the order
// dgq/cpu/decode_attention.hpp states. decode_attention_chunk.cpp holds the AVX2/FMA version
// (its readers in decode_attention_readers_avx2.hpp), decode_attention_chunk_scalar.cpp the
// scalar one of the same order.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "dgq/cpu/decode_attention.hpp"

namespace dgq::cpu::attention {

struct ChunkInput {
  StoredFormat format;    // K's
  StoredFormat v_format;  // V's (differs from K's only between uniform widths)
  const std::uint8_t* k;  // the chunk's first K row (head_dim / 32 blocks per row)
  const std::uint8_t* v;
  std::int64_t tokens;  // 1 .. kChunkTokens
  int head_dim, group;
  const float* q;  // [group][head_dim]
  float scale;
  // formats with ranges only (dgq, uniform*): where each of the chunk's tokens finds its lo and scale (its segment's
  // range row: one value, or head_dim with granularity=segment-channel, as *_range_channels
  // says), for K and for V, and whether values round to fp16 (SpanRanges::f16).
  const float* const* k_lo = nullptr;
  const float* const* k_scale = nullptr;
  const float* const* v_lo = nullptr;
  const float* const* v_scale = nullptr;
  int k_range_channels = 1, v_range_channels = 1;
  // Codebook formats: the levels K's and V's codes index (2^bits of them, then zeros to 16).
  const float* k_codebook = nullptr;
  const float* v_codebook = nullptr;
  // Set by the AVX2 path for itself: a tabulated role's values per chunk token and code
  // ([tokens][16]), nullptr otherwise.
  const float* k_token_levels = nullptr;
  const float* v_token_levels = nullptr;
  // Whether K's and V's values round to fp16 (SpanRanges::f16 of each role).
  bool k_f16 = true, v_f16 = true;
  // Bytes from one token's K codes to the next's (V's): head_dim / 32 blocks when the rows are
  // packed, more where each token's codes sit in a slot with other fields (vLLM's presets).
  std::int64_t k_row_bytes = 0, v_row_bytes = 0;
  // Raw rows (StoredKv::k_raw): chunk tokens k_raw_from .. tokens-1 of K are head_dim values in
  // fp16 (raw_f16) or fp32 from k_raw on (the row of token k_raw_from); k_raw_from >= tokens:
  // none. V likewise.
  std::int64_t k_raw_from = kNoRawRows, v_raw_from = kNoRawRows;
  const std::uint8_t* k_raw = nullptr;
  const std::uint8_t* v_raw = nullptr;
  bool raw_f16 = true;

  static constexpr std::int64_t kNoRawRows = std::numeric_limits<std::int64_t>::max();
  std::int64_t codes_end(bool value) const { return std::min(value ? v_raw_from : k_raw_from, tokens); }
  bool f16(bool value) const { return value ? v_f16 : k_f16; }
  std::int64_t row_bytes(bool value) const { return value ? v_row_bytes : k_row_bytes; }
};

struct ChunkOutput {
  float* max;  // [group]
  float* sum;  // [group]
  float* acc;  // [group][head_dim]
};

// scores: scratch of group * kChunkTokens floats. scalar: take the scalar path even where the
// AVX2 one is compiled (the tests compare the two).
void attend_chunk(const ChunkInput& in, const ChunkOutput& out, float* scores, bool scalar);
bool vectorized_path_compiled();
// The scalar path alone (decode_attention_chunk_scalar.cpp): what attend_chunk runs where the
// AVX2 one is not compiled or not asked for.
void attend_chunk_scalar(const ChunkInput& in, const ChunkOutput& out, float* scores);

}  // namespace dgq::cpu::attention

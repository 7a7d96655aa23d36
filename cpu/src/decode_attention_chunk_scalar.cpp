// The scalar path of a decode step's chunk: each stored row decoded by the reference's block
// decoders and the rules of dgq/kv_block_rules.hpp, then the sums in the order
// dgq/attention_rules.hpp states. Non-AVX2 builds run it; DecodePath::scalar selects it on any
// machine, so that the tests compare it with the AVX2 path bit for bit.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include "decode_attention_chunk.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kv_block_rules.hpp"

namespace dgq::cpu::attention {
namespace ar = dgq::attention_rules;
namespace {

constexpr int kBlock = 32;

void dequantize_block_scalar(StoredFormat f, const std::uint8_t* block, float* out) {
  switch (f) {
    case StoredFormat::q8_0: {
      q8_0::Block b;
      std::memcpy(&b, block, sizeof b);
      return q8_0::dequantize_block(b, kBlock, out);
    }
    case StoredFormat::q4_0: {
      ggml::BlockQ4_0 b;
      std::memcpy(&b, block, sizeof b);
      return ggml::dequantize_q4_0(b, out);
    }
    case StoredFormat::iq4_nl: {
      ggml::BlockIQ4NL b;
      std::memcpy(&b, block, sizeof b);
      return ggml::dequantize_iq4_nl(b, out);
    }
    default: break;  // no block scale: dequantize_dgq_row_scalar, dequantize_uniform_row_scalar
  }
  assert(false);
}

// DGQ v1's row (rule 7, in-band markers unmarked as rule 8 does), rounded to fp16 when asked.
void dequantize_dgq_row_scalar(const std::uint8_t* row, int head_dim, const float* lo, const float* scale,
                               int range_channels, bool f16, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    const int c = range_channels == 1 ? 0 : d;
    out[d] = kv_block_rules::dgq_value(row[d], lo[c], scale[c], f16);
  }
}

// A row of dgq2's or KIVI's b-bit codes (rule V5's value), rounded to fp16 when asked.
void dequantize_uniform_row_scalar(const std::uint8_t* row, int bits, int head_dim, const float* lo, const float* scale,
                                   int range_channels, bool f16, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    const int c = range_channels == 1 ? 0 : d;
    out[d] = kv_block_rules::uniform_value(kv_block_rules::uniform_code(row, d, bits), lo[c], scale[c], f16);
  }
}

// A raw row (fp16 widened exactly, or fp32 as stored).
void raw_row_scalar(const std::uint8_t* row, bool f16, int head_dim, float* out) {
  for (int d = 0; d < head_dim; ++d) {
    if (f16) {
      std::uint16_t h;
      std::memcpy(&h, row + 2 * d, 2);
      out[d] = rules::half_to_float(h);
    } else {
      std::memcpy(out + d, row + 4 * d, 4);
    }
  }
}

// Row t of the chunk's K (value = false) or V.
void dequantize_row_scalar(const ChunkInput& in, bool value, std::int64_t t, float* out) {
  if (const std::int64_t raw_from = value ? in.v_raw_from : in.k_raw_from; t >= raw_from) {
    const std::int64_t raw_row_bytes = static_cast<std::int64_t>(in.head_dim) * (in.raw_f16 ? 2 : 4);
    return raw_row_scalar((value ? in.v_raw : in.k_raw) + (t - raw_from) * raw_row_bytes, in.raw_f16, in.head_dim, out);
  }
  const StoredFormat f = value ? in.v_format : in.format;
  const std::uint8_t* row = (value ? in.v : in.k) + t * in.row_bytes(value);
  const float* lo = kv_format_has_ranges(f) ? (value ? in.v_lo : in.k_lo)[t] : nullptr;
  const float* scale = kv_format_has_ranges(f) ? (value ? in.v_scale : in.k_scale)[t] : nullptr;
  const int channels = value ? in.v_range_channels : in.k_range_channels;
  if (f == StoredFormat::dgq)
    return dequantize_dgq_row_scalar(row, in.head_dim, lo, scale, channels, in.f16(value), out);
  const auto rf = static_cast<StoredFormat>(f);
  if (kv_block_rules::is_codebook(rf)) {
    const float* levels = value ? in.v_codebook : in.k_codebook;
    for (int d = 0; d < in.head_dim; ++d)
      out[d] = kv_block_rules::codebook_value(
          levels[kv_block_rules::uniform_code(row, d, kv_block_rules::uniform_bits(rf))], scale[0]);
    return;
  }
  if (const int bits = kv_block_rules::uniform_bits(rf); bits != 0)
    return dequantize_uniform_row_scalar(row, bits, in.head_dim, lo, scale, channels, in.f16(value), out);
  for (int b = 0; b < in.head_dim / kBlock; ++b)
    dequantize_block_scalar(f, row + b * kv_block_bytes(f), out + b * kBlock);
}

}  // namespace

float dot_scalar(const float* q, const float* k, int head_dim) {
  float acc[ar::kDotAccumulators][ar::kDotLanes] = {};
  for (int d = 0; d < head_dim; ++d) {
    float& a = acc[(d / ar::kDotLanes) % ar::kDotAccumulators][d % ar::kDotLanes];
    a = std::fma(q[d], k[d], a);
  }
  float lanes[ar::kDotLanes];
  static_assert(ar::kDotAccumulators == 2, "the pairwise sum below is written for two accumulators");
  for (int j = 0; j < ar::kDotLanes; ++j) lanes[j] = acc[0][j] + acc[1][j];
  return ar::lane_tree_sum8(lanes);
}

void attend_chunk_scalar(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  const int D = in.head_dim;
  std::vector<float> x(static_cast<std::size_t>(D));
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    dequantize_row_scalar(in, false, t, x.data());
    for (int h = 0; h < in.group; ++h)
      scores[h * ar::kChunkTokens + t] = dot_scalar(in.q + h * D, x.data(), D) * in.scale;
  }
  for (int h = 0; h < in.group; ++h) {
    float* s = scores + h * ar::kChunkTokens;
    const float m = *std::max_element(s, s + in.tokens);
    float lanes[ar::kDotLanes] = {};
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      s[t] = ar::softmax_exp(s[t] - m);
      lanes[t % ar::kDotLanes] += s[t];
    }
    out.max[h] = m;
    out.sum[h] = ar::lane_tree_sum8(lanes);
    std::fill(out.acc + h * D, out.acc + (h + 1) * D, 0.0f);
  }
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    dequantize_row_scalar(in, true, t, x.data());
    for (int h = 0; h < in.group; ++h) {
      const float p = scores[h * ar::kChunkTokens + t];
      float* acc = out.acc + h * D;
      for (int d = 0; d < D; ++d) acc[d] = std::fma(p, x[d], acc[d]);
    }
  }
}

}  // namespace dgq::cpu::attention

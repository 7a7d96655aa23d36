#pragma once
// Decode attention on a stored cache, on the GPU: the CUDA twin of dgq::cpu::decode_attention
// (cpu/include/dgq/cpu/decode_attention.hpp) for the unrotated q8_0, q4_0 and iq4_nl caches,
// DGQ v1's codes (format dgq: granularity=segment or segment-channel, fp16 or fp32 input) and
// dgq2's and KIVI's uniform codes (uniform2 .. uniform8, K and V of different widths), with
// llama.cpp's Hadamard rotation as the CPU kernel applies it (the query rotated with K's
// blocks, the output rotated back with V's; on the host, by the core's rules),
// in the same order (dgq/attention_rules.hpp: 256-token chunks, the 2 x 8 lane dot product,
// the lane tree, the library-free exp, the merge in token order), so its output is meant to be
// the CPU kernel's bit for bit (tests/gpu/test_gpu_decode_attention.cpp). One thread per (KV
// head, chunk, query head of the group) and one per query head for the merge: written to be
// checked, not fast. It passed on a GPU (docs/gpu-results.md names the device and the commits;
// docs/cuda.md the changes since); no claim about its speed.
#include <cstdint>
#include <optional>
#include <vector>

#include "dgq/kv_block_rules.hpp"

namespace dgq::cuda {

// Formats with ranges (dgq, uniform*): a head's segments as the CPU kernel's SpanRanges
// holds them (edges [0, e1, ..., tokens], each segment's lo and scale, one per segment or, with
// channels = head_dim, one per segment and channel: dgq::cpu::dgq_segment_ranges and
// packed_codes_head read them from the parts).
struct DgqSegments {
  std::vector<std::uint32_t> edges;
  std::vector<float> lo, scale;
  int channels = 1;
};

struct DecodeAttentionInput {
  StoredFormat format = StoredFormat::q8_0;     // K's, and V's unless v_format is set
  std::optional<StoredFormat> v_format;         // V's when it differs (uniform widths only)
  int kv_heads = 1, group = 1, head_dim = 128;  // head_dim: a multiple of 32, at most 256
  std::int64_t tokens = 1;
  std::vector<const std::uint8_t*> k, v;  // host pointers: KV head h's tokens x head_dim/32 blocks
  // formats with ranges only: head h's segments (k_segments[h] for k[h], v_segments[h] for v[h])
  // and whether the values round to fp16 (the input was fp16) as rules 7 and V5 do.
  std::vector<DgqSegments> k_segments, v_segments;
  bool dgq_f16 = true;
  // K or V stored with rot=hadamard (q4_0:rot=hadamard, dgq2's rot and rot_on, DGQ v1's
  // modifier): the CPU kernel's StoredKv::k_rotated / v_rotated. head_dim a multiple of 64.
  bool k_rotated = false, v_rotated = false;
  const float* q = nullptr;  // host [kv_heads * group][head_dim]
  float scale = 1.0f;
};

// out (host) [kv_heads * group][head_dim]. Throws dgq::ParameterError for a shape it does not
// take and dgq::Error for a CUDA failure (no device included).
void decode_attention(const DecodeAttentionInput& in, float* out);

}  // namespace dgq::cuda

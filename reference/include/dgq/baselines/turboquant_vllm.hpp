#pragma once
// vLLM's TurboQuant presets (reference/src/schemes/turboquant_vllm_scheme.cpp; docs/spec.md
// rules TV1-TV12): the pieces a reader of their stored slots needs (decode attention,
// cpu/src/decode_attention_vllm.cpp), the same functions the scheme itself uses.
#include <cstdint>
#include <string_view>
#include <vector>

#include "dgq/scheme.hpp"

namespace dgq::turboquant_vllm {

struct Preset {
  std::string_view name;  // the family: turboquant_k8v4, turboquant_4bit_nc, ...
  int key_bits;           // 8: FP8 keys (no rotation); 3 or 4: Lloyd-Max codes of the rotated key
  int value_bits;         // 3 or 4: uniform min/max codes
};
const Preset* find_preset(std::string_view family);  // nullptr for another family

// Bytes of d codes of `bits` bits (one little-endian bit stream per row), and of a role's slot:
// key codes | norm fp16 | 2 reserved (FP8 keys: d bytes), value codes | scale fp16 | zero fp16.
std::int64_t packed_bytes(std::int64_t d, int bits);
std::int64_t slot_bytes(const Preset& p, std::int64_t d, TensorRole role);
float slot_half(const std::uint8_t* at);                  // an fp16 field of a slot (little-endian)
const float* centroids(int d, int bits);                  // the pinned Lloyd-Max levels, 2^bits of them
std::vector<float> key_signs(int d, std::uint32_t seed);  // the WHT's per-channel signs (rule TV3)
float hadamard_scale(int d);                              // 1 / sqrt(d), the orthonormal WHT's factor
// Rule TV9's norm correction of a key row whose codes decode to levels[0..d): 1 / sqrt(sum of
// squares, fma-accumulated in channel order, + 1e-16).
float norm_correction(const float* levels, int d);

}  // namespace dgq::turboquant_vllm

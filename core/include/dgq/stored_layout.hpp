#pragma once
// How the decode kernels read a family's stored heads in place, without decompressing them: a
// trait of the family's registry entry (SchemeFamily::stored_layout), as ggml's type traits
// carry vec_dot, so that a backend picks its reader by what a head holds and never by the
// family's name. Each layout is one reader of cpu/ (cpu/src/stored_head_readers.cpp), which
// turns the head's parts into codes of a StoredFormat (dgq/stored_format.hpp) and the ranges
// beside them. A family the kernels cannot read keeps the default and is refused by name; a new
// family that stores one of these layouts declares it (docs/adding-a-scheme.md), one with a
// layout of its own adds a kind here and its reader in cpu/.
#include <cstdint>

namespace dgq {

enum class StoredLayout : std::uint8_t {
  unreadable,       // no reader: decode attention refuses the family
  ggml_blocks,      // part "blocks": ggml's blocks of the family's stored_format
  segment_codes,    // DGQ v1: one int8 code per value and a range per segment (or segment and channel)
  span_codes,       // dgq2: packed codes of each role's width, a range per span (docs/spec.md rule V3)
  group_codes,      // KIVI: packed codes, key ranges per channel over token groups, value ranges per token
  codebook_tokens,  // TurboQuant_mse: packed codebook indices and each token's norm, in a rotated basis
  preset_slots,     // vLLM's TurboQuant presets: each token's codes and norm (or scale and zero) in one slot
};
inline constexpr int kStoredLayoutCount = 7;

}  // namespace dgq

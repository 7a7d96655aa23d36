#pragma once
// One compressed head (a Scheme::compress result) as decode attention reads it in place: its
// codes' format, the codes (into the head's parts, which must outlive it), their basis, the
// ranges beside them, raw rows and row stride. The reader is chosen by the family's registry
// trait (SchemeFamily::stored_layout, dgq/stored_layout.hpp), never by its name:
//   ggml_blocks (q8_0, q4_0, iq4_nl): part "blocks" (with rot=hadamard: in the rotated basis);
//   segment_codes (dgq): its codes and segment ranges (dgq_segment_ranges);
//   span_codes, group_codes, codebook_tokens, preset_slots (dgq2, kivi-2/4, turboquant, vLLM's
//   Lloyd-Max presets): packed_codes_head (raw rows, slots, codebooks and rotations included).
// An unreadable family or a modifier the kernel does not read is refused with
// std::invalid_argument naming the head's scheme; corrupt parts throw InputError.
#include <cstdint>
#include <functional>

#include "dgq/cpu/span_ranges.hpp"
#include "dgq/scheme.hpp"
#include "dgq/stored_format.hpp"

namespace dgq::cpu {

struct StoredHead {
  StoredFormat format = StoredFormat::q8_0;
  const std::uint8_t* codes = nullptr;
  bool rotated = false;  // rot=hadamard, or dgq2's own Hadamard blocks (StoredKv's k_rotated / v_rotated)
  std::function<void(float*)> rotation;  // another rotation (TurboQuant's Pi, vLLM's WHT)
  SpanRanges ranges;                     // formats with ranges (kv_format_has_ranges)
  const std::uint8_t* raw = nullptr;     // raw_tokens rows of head_dim values after the codes
  std::int64_t raw_tokens = 0;
  std::int64_t row_stride = 0;  // StoredKv::k_row_stride / v_row_stride (0: packed)
};

// Any head, by its family's stored layout. CompressedLayer reads every head through it; so does
// the decode bench (bench/ggml/decode_side_by_side.cpp).
StoredHead read_stored_head(const Compressed& c);

// A DGQ v1 head (layout segment_codes: granularity segment or segment-channel, any markers,
// fp16 or fp32 input, with or without rot=hadamard): its segment ranges and a pointer to its
// codes (into c). Throws std::invalid_argument for another layout, InputError for corrupt parts.
SpanRanges dgq_segment_ranges(const Compressed& c, const std::uint8_t** codes);

// A head of packed b-bit codes (the uniform and codebook formats; layouts span_codes,
// group_codes, codebook_tokens and preset_slots): its format (the role's code width), codes,
// whether the role is stored rotated and its ranges, one span per run of tokens that shares
// them (dgq2 rule V3's spans: segments, segment-channel groups or tokens; KIVI's key groups of
// `group` tokens with a range per channel, or its per-token value ranges), lo and scale = (hi -
// lo) / levels as the scheme's decompress computes them; TurboQuant (variant=mse, 2-4 bits): a
// codebook format, one span per token with scale = its norm, the codebook, and the role's
// rotation Pi as `rotation` (forward Pi for a K head, to apply to the query; inverse Pi^T for a
// V head, to apply to the output). dgq2's rotation is the Hadamard blocks (`rotated`).
// Raw rows (dgq2's and KIVI's residual tokens, KIVI's incomplete key group) are the head's last
// raw_tokens tokens, in the input dtype (ranges.f16: fp16, else fp32) at `raw`: the codes and
// ranges cover the tokens before them. dgq2's in-band markers in a segmenting role (a code that
// decodes as its neighbour), dgq2's rotation with raw rows (which it keeps unrotated) and
// TurboQuant's QJL residual (variant=prod) are refused with std::invalid_argument, as is another
// layout; InputError for corrupt parts.
StoredHead packed_codes_head(const Compressed& c);

}  // namespace dgq::cpu

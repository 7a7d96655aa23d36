#pragma once
// DGQ v2's segments (docs/spec.md, "DGQ v2", rules V2 and V6): where the quantized tokens are
// cut (v1's variance change points, or equal lengths for the ablation) and how the cuts are
// stored and recovered.
#include <cstdint>
#include <vector>

#include "params.hpp"

namespace dgq::schemes::dgq2 {

// Rule V2: edges [0, e1, ..., quantized] of the segments of basis ([quantized][channels] fp32,
// finite): v1 rules 1-5 with p.seg (boundaries=adaptive), the same number of segments of equal
// length, e_k = floor(k * quantized / S) (boundaries=fixed), or v1 rules 1-3 with rule C3's
// first-come selection (boundaries=online). {0} when quantized = 0.
// Throws InputError "dgq2: variance of token t overflows fp32" (v1 rule 1, fp32/bf16 input).
std::vector<std::uint32_t> choose_edges(const float* basis, std::int64_t quantized, std::int64_t channels,
                                        const Params& p);

// The second half of choose_edges: rule V2's edges from v1's block ratios (rule 3) of the
// quantized tokens, for a caller that ran v1's pass 1 itself (dgq2's direct compress).
std::vector<std::uint32_t> edges_from_ratios(const std::vector<float>& block_ratio, std::int64_t quantized,
                                             const Params& p);

// Rule V6, table and bitmap: the "markers" part (empty for inband, whose markers are codes).
std::vector<std::uint8_t> marker_part(const std::vector<std::uint32_t>& edges, std::int64_t quantized, Markers m);

// In-band markers on channel 0 (rule V6), in the unsigned code space of `bits`: a data code u
// is in [1, 2^bits - 2]; the marker is 2^bits - 1 when u >= 2^(bits-1), else 0. Decoding a
// marker gives the nearest data code (2^bits - 2, or 1).
inline std::uint8_t inband_mark(std::uint8_t u, int bits) {
  return u >= (1u << (bits - 1)) ? static_cast<std::uint8_t>((1u << bits) - 1u) : 0;
}
inline bool is_inband_marker(std::uint8_t u, int bits) { return u == 0 || u == (1u << bits) - 1u; }

// The edges a decoder recovers from the stored parts (rule V6): the table, the bitmap, or
// the markers among the codes (channel 0 of tokens 1 .. quantized-1). Throws InputError
// "<spec>: corrupt dgq2 data: ..." when they contradict each other or the shape.
std::vector<std::uint32_t> edges_from_parts(const std::vector<std::uint8_t>& markers, const std::uint8_t* codes,
                                            std::uint64_t code_bytes, std::int64_t quantized, std::int64_t channels,
                                            const Params& p, const std::string& spec);

}  // namespace dgq::schemes::dgq2

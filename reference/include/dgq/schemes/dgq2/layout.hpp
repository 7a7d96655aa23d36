#pragma once
// DGQ v2's layout (docs/spec.md, "DGQ v2", rules V1, V3 and V7): which tokens are quantized,
// which tokens and channels share a range, and how many bytes each part holds.
#include <cstdint>
#include <vector>

#include "dgq/scheme.hpp"
#include "params.hpp"

namespace dgq::schemes::dgq2 {

// Rule V1: the first max(tokens - residual, 0) tokens are quantized, the rest stored raw.
inline std::int64_t quantized_tokens(std::int64_t tokens, int residual) {
  return tokens > residual ? tokens - residual : 0;
}

// Tokens [first, end) that share ranges (one range, or one per channel: per_channel()).
struct TokenSpan {
  std::uint32_t first = 0, end = 0;
};

inline bool per_channel(RangeGranularity g) {
  return g == RangeGranularity::segment_channel || g == RangeGranularity::segment_channel_group;
}

// Rule V3: the spans in token order. edges = [0, e1, ..., Lq] (ignored for token).
std::vector<TokenSpan> range_spans(RangeGranularity g, int group, const std::vector<std::uint32_t>& edges,
                                   std::int64_t quantized);
// range_spans(...).size() without building them: O(segments), for the causal schedule, which
// asks it for every final prefix.
std::uint64_t range_span_count(RangeGranularity g, int group, const std::vector<std::uint32_t>& edges,
                               std::int64_t quantized);

inline std::uint64_t range_pair_bytes(RangeDtype t) { return t == RangeDtype::fp16 ? 4 : 8; }

struct StoredBytes {
  std::uint64_t codes = 0, ranges = 0, markers = 0, residual = 0;
  std::uint64_t total() const { return codes + ranges + markers + residual; }
};

// Rule V7 for a tensor whose quantized tokens are cut at `edges` ([0, ..., Lq]; {0} or
// {0, Lq} when the role's granularity does not segment).
StoredBytes stored_bytes(const Params& p, TensorRole role, std::int64_t tokens, std::int64_t channels, DType dtype,
                         const std::vector<std::uint32_t>& edges);
// The most stored_bytes can be for this shape: every segmenting tensor at its full budget
// (v1 rule 4), segment-channel-group at the most groups that many segments can cut.
std::uint64_t planned_bytes(const Params& p, TensorRole role, std::int64_t tokens, std::int64_t channels, DType dtype);

}  // namespace dgq::schemes::dgq2

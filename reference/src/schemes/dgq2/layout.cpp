#include "dgq/schemes/dgq2/layout.hpp"

#include <algorithm>

#include "dgq/element_rules.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"

namespace dgq::schemes::dgq2 {

std::vector<TokenSpan> range_spans(RangeGranularity g, int group, const std::vector<std::uint32_t>& edges,
                                   std::int64_t quantized) {
  std::vector<TokenSpan> spans;
  if (g == RangeGranularity::token) {
    spans.reserve(static_cast<std::size_t>(quantized));
    for (std::int64_t t = 0; t < quantized; ++t) {
      spans.push_back({static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(t + 1)});
    }
    return spans;
  }
  for (std::size_t s = 0; s + 1 < edges.size(); ++s) {
    if (g != RangeGranularity::segment_channel_group) {
      spans.push_back({edges[s], edges[s + 1]});
      continue;
    }
    // Groups of `group` tokens from the segment's first token; the last may be shorter.
    for (std::uint64_t first = edges[s]; first < edges[s + 1]; first += static_cast<std::uint64_t>(group)) {
      const std::uint64_t end = std::min<std::uint64_t>(edges[s + 1], first + static_cast<std::uint64_t>(group));
      spans.push_back({static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(end)});
    }
  }
  return spans;
}

std::uint64_t range_span_count(RangeGranularity g, int group, const std::vector<std::uint32_t>& edges,
                               std::int64_t quantized) {
  if (g == RangeGranularity::token) return static_cast<std::uint64_t>(quantized);
  const std::uint64_t segments = edges.size() > 1 ? edges.size() - 1 : 0;
  if (g != RangeGranularity::segment_channel_group) return segments;
  std::uint64_t spans = 0;
  const auto per_group = static_cast<std::uint64_t>(group);
  for (std::size_t s = 0; s + 1 < edges.size(); ++s) spans += (edges[s + 1] - edges[s] + per_group - 1) / per_group;
  return spans;
}

namespace {

std::uint64_t marker_bytes(Markers m, std::uint64_t segments, std::int64_t quantized) {
  switch (m) {
    case Markers::table: return segments > 0 ? 4 * (segments - 1) : 0;
    case Markers::bitmap: return static_cast<std::uint64_t>((quantized + 7) / 8);
    case Markers::inband: return 0;
  }
  return 0;
}

}  // namespace

StoredBytes stored_bytes(const Params& all, TensorRole role, std::int64_t tokens, std::int64_t channels, DType dtype,
                         const std::vector<std::uint32_t>& edges) {
  const Params p = all.for_role(role);
  const std::int64_t q = quantized_tokens(tokens, p.residual);
  const RangeGranularity g = p.granularity(role);
  StoredBytes b;
  b.codes = packed_code_bytes(static_cast<std::uint64_t>(q * channels), p.bits);
  const std::uint64_t spans = range_span_count(g, p.group(role), edges, q);
  b.ranges = spans * (per_channel(g) ? static_cast<std::uint64_t>(channels) : 1) * range_pair_bytes(p.range_dtype);
  const std::uint64_t segments = edges.size() > 1 ? edges.size() - 1 : 0;
  b.markers = uses_segments(g) ? marker_bytes(p.seg.markers, segments, q) : 0;
  b.residual = static_cast<std::uint64_t>((tokens - q) * channels) * dtype_size(dtype);
  return b;
}

std::uint64_t planned_bytes(const Params& all, TensorRole role, std::int64_t tokens, std::int64_t channels,
                            DType dtype) {
  const Params p = all.for_role(role);
  const std::int64_t q = quantized_tokens(tokens, p.residual);
  const RangeGranularity g = p.granularity(role);
  const auto budget = static_cast<std::uint64_t>(p.segment_budget(q));
  const auto d = static_cast<std::uint64_t>(channels);
  const std::uint64_t pair = range_pair_bytes(p.range_dtype);
  std::uint64_t ranges = 0;
  switch (g) {
    case RangeGranularity::segment: ranges = budget; break;
    case RangeGranularity::segment_channel: ranges = budget * d; break;
    case RangeGranularity::token: ranges = static_cast<std::uint64_t>(q); break;
    case RangeGranularity::segment_channel_group: {
      // sum_s ceil(L_s / G) <= ceil(Lq / G) + S - 1: each cut adds at most one partial group.
      const auto group = static_cast<std::uint64_t>(p.group(role));
      ranges = q > 0 ? ((static_cast<std::uint64_t>(q) + group - 1) / group + budget - 1) * d : 0;
      break;
    }
  }
  StoredBytes b;
  b.codes = packed_code_bytes(static_cast<std::uint64_t>(q * channels), p.bits);
  b.ranges = ranges * pair;
  b.markers = uses_segments(g) ? marker_bytes(p.seg.markers, budget, q) : 0;
  b.residual = static_cast<std::uint64_t>((tokens - q) * channels) * dtype_size(dtype);
  return b.total();
}

}  // namespace dgq::schemes::dgq2

#pragma once
// Where a dgq2 range lies, for rule V4's error messages; shared by both encode paths so that
// their messages are one text.
#include <cstddef>
#include <string>

#include "dgq/schemes/dgq2/params.hpp"
#include "dgq/schemes/dgq2/segments.hpp"

namespace dgq::schemes::dgq2 {

inline std::string span_name(RangeGranularity g, const TokenSpan& s) {
  const std::string tokens = std::to_string(s.first) + ".." + std::to_string(s.end - 1);
  return g == RangeGranularity::token ? "token " + std::to_string(s.first) : "tokens " + tokens;
}

// Where a range lies, for rule V4's error messages: "token t", or "segment s (tokens a..b)",
// then ", channel d" for per-channel ranges. Built only when a range is refused.
inline std::string range_where(RangeGranularity g, const TokenSpan& s, std::size_t segment, bool channelwise,
                               std::size_t channel) {
  const std::string where = g == RangeGranularity::token
                                ? span_name(g, s)
                                : "segment " + std::to_string(segment) + " (" + span_name(g, s) + ")";
  return channelwise ? where + ", channel " + std::to_string(channel) : where;
}

}  // namespace dgq::schemes::dgq2

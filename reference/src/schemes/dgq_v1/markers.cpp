// Rule 8: how segment edges are stored (table, bitmap, in-band). How a decoder gets them back
// is the core's (core/src/dgq_segment_edges.cpp), shared with every backend.
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "pipeline.hpp"

namespace dgq {
namespace detail {

void store_markers(const std::vector<std::uint32_t>& edges, DgqV1Encoded& enc, std::int8_t* codes) {
  const int segments = static_cast<int>(edges.size()) - 1;
  // Parts of other marker modes stay empty (enc may be reused from another encode).
  enc.boundaries.clear();
  enc.bitmap.clear();
  switch (enc.params.markers) {
    case Markers::table: enc.boundaries.assign(edges.begin() + 1, edges.end() - 1); return;
    case Markers::bitmap:
      enc.bitmap.assign(static_cast<std::size_t>((enc.tokens + 7) / 8), 0);
      for (int s = 1; s < segments; s += 2)  // odd segments have parity bit 1
        for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t)
          enc.bitmap[t / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
      return;
    case Markers::inband:
      for (int s = 1; s < segments; ++s) {
        std::int8_t& c = codes[static_cast<std::size_t>(edges[s]) * enc.channels];
        c = rules::inband_mark(c);
      }
      return;
  }
}

}  // namespace detail
}  // namespace dgq

// Rule 8: how segment edges are stored (table, bitmap, in-band) and how a decoder gets them back.
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "pipeline.hpp"

namespace dgq {
namespace detail {

void store_markers(const std::vector<std::uint32_t>& edges, DgqEncoded& enc, std::int8_t* codes) {
  const int segments = static_cast<int>(edges.size()) - 1;
  // Parts of other marker modes stay empty (enc may be reused from another encode).
  enc.boundaries.clear();
  enc.bitmap.clear();
  switch (enc.params.markers) {
    case Markers::table:
      enc.boundaries.assign(edges.begin() + 1, edges.end() - 1);
      return;
    case Markers::bitmap:
      enc.bitmap.assign(static_cast<std::size_t>((enc.tokens + 7) / 8), 0);
      for (int s = 1; s < segments; s += 2)  // odd segments have parity bit 1
        for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t) enc.bitmap[t / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
      return;
    case Markers::inband:
      for (int s = 1; s < segments; ++s) {
        std::int8_t& c = codes[static_cast<std::size_t>(edges[s]) * enc.channels];
        c = rules::inband_mark(c);
      }
      return;
  }
}

namespace {

[[noreturn]] void corrupt(const std::string& what) { throw InputError("corrupt DGQ data: " + what); }

std::vector<std::uint32_t> interior_from_table(const DgqEncoded& enc) {
  for (std::size_t i = 0; i < enc.boundaries.size(); ++i) {
    const std::uint32_t e = enc.boundaries[i];
    const std::uint32_t prev = i == 0 ? 0 : enc.boundaries[i - 1];
    if (e <= prev || e >= enc.tokens)
      corrupt("boundary " + std::to_string(i) + " = " + std::to_string(e) + " is not increasing inside (0, " +
              std::to_string(enc.tokens) + ")");
  }
  return enc.boundaries;
}

std::vector<std::uint32_t> interior_from_bitmap(const DgqEncoded& enc) {
  if (enc.bitmap.size() != static_cast<std::size_t>((enc.tokens + 7) / 8))
    corrupt("bitmap has " + std::to_string(enc.bitmap.size()) + " bytes, expected ceil(tokens/8) = " +
            std::to_string((enc.tokens + 7) / 8));
  auto bit = [&](std::int64_t t) { return (enc.bitmap[t / 8] >> (t % 8)) & 1u; };
  if (enc.tokens > 0 && bit(0) != 0) corrupt("bitmap bit of token 0 is 1 (segment 0 has parity 0)");
  std::vector<std::uint32_t> interior;
  for (std::int64_t t = 1; t < enc.tokens; ++t)
    if (bit(t) != bit(t - 1)) interior.push_back(static_cast<std::uint32_t>(t));
  return interior;
}

std::vector<std::uint32_t> interior_from_inband(const DgqEncoded& enc) {
  std::vector<std::uint32_t> interior;
  for (std::int64_t t = 0; t < enc.tokens; ++t) {
    if (!rules::is_inband_marker(enc.codes[static_cast<std::size_t>(t * enc.channels)])) continue;
    if (t == 0) corrupt("in-band marker at token 0 (segment 0 has none)");
    interior.push_back(static_cast<std::uint32_t>(t));
  }
  return interior;
}

}  // namespace
}  // namespace detail

std::vector<std::uint32_t> dgq_segment_edges(const DgqEncoded& enc) {
  if (enc.codes.size() != static_cast<std::size_t>(enc.tokens * enc.channels))
    detail::corrupt("codes has " + std::to_string(enc.codes.size()) + " bytes, expected tokens*channels = " +
                    std::to_string(enc.tokens * enc.channels));
  std::vector<std::uint32_t> interior;
  switch (enc.params.markers) {
    case Markers::table:
      interior = detail::interior_from_table(enc);
      break;
    case Markers::bitmap:
      interior = detail::interior_from_bitmap(enc);
      break;
    case Markers::inband:
      interior = detail::interior_from_inband(enc);
      break;
  }
  std::vector<std::uint32_t> edges = detail::with_ends(interior, enc.tokens);
  if (static_cast<int>(edges.size()) - 1 != enc.segments)
    detail::corrupt("the stored markers give " + std::to_string(edges.size() - 1) + " segments, the header says " +
                    std::to_string(enc.segments));
  return edges;
}

}  // namespace dgq

// Rule 8, read side: the segment edges a decoder recovers from the stored parts (table,
// bitmap, in-band markers), with every contradiction reported. Shared by every backend: the CPU
// decoder and the CUDA scheme's diagnostics read the markers through this one function.
#include <string>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq {
namespace detail {
namespace {

[[noreturn]] void corrupt(const std::string& what) { throw InputError("corrupt DGQ data: " + what); }

std::vector<std::uint32_t> interior_from_table(const DgqV1Encoded& enc) {
  for (std::size_t i = 0; i < enc.boundaries.size(); ++i) {
    const std::uint32_t e = enc.boundaries[i];
    const std::uint32_t prev = i == 0 ? 0 : enc.boundaries[i - 1];
    if (e <= prev || e >= enc.tokens)
      corrupt("boundary " + std::to_string(i) + " = " + std::to_string(e) + " is not increasing inside (0, " +
              std::to_string(enc.tokens) + ")");
  }
  return enc.boundaries;
}

std::vector<std::uint32_t> interior_from_bitmap(const DgqV1Encoded& enc) {
  if (enc.bitmap.size() != static_cast<std::size_t>((enc.tokens + 7) / 8))
    corrupt("bitmap has " + std::to_string(enc.bitmap.size()) +
            " bytes, expected ceil(tokens/8) = " + std::to_string((enc.tokens + 7) / 8));
  auto bit = [&](std::int64_t t) { return (enc.bitmap[t / 8] >> (t % 8)) & 1u; };
  if (enc.tokens > 0 && bit(0) != 0) corrupt("bitmap bit of token 0 is 1 (segment 0 has parity 0)");
  std::vector<std::uint32_t> interior;
  for (std::int64_t t = 1; t < enc.tokens; ++t)
    if (bit(t) != bit(t - 1)) interior.push_back(static_cast<std::uint32_t>(t));
  return interior;
}

std::vector<std::uint32_t> interior_from_inband(const DgqV1Encoded& enc) {
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

std::vector<std::uint32_t> dgq_segment_edges(const DgqV1Encoded& enc) {
  if (enc.codes.size() != static_cast<std::size_t>(enc.tokens * enc.channels))
    detail::corrupt("codes has " + std::to_string(enc.codes.size()) +
                    " bytes, expected tokens*channels = " + std::to_string(enc.tokens * enc.channels));
  std::vector<std::uint32_t> interior;
  switch (enc.params.markers) {
    case Markers::table: interior = detail::interior_from_table(enc); break;
    case Markers::bitmap: interior = detail::interior_from_bitmap(enc); break;
    case Markers::inband: interior = detail::interior_from_inband(enc); break;
  }
  std::vector<std::uint32_t> edges;
  edges.reserve(interior.size() + 2);
  edges.push_back(0);
  edges.insert(edges.end(), interior.begin(), interior.end());
  if (enc.tokens > 0) edges.push_back(static_cast<std::uint32_t>(enc.tokens));
  if (static_cast<int>(edges.size()) - 1 != enc.segments)
    detail::corrupt("the stored markers give " + std::to_string(edges.size() - 1) + " segments, the header says " +
                    std::to_string(enc.segments));
  return edges;
}

}  // namespace dgq

// The DGQ part layout (dgq/dgq_parts.hpp): writing a DgqV1Encoded into parts and reading it back
// with every size checked before a byte is read.
#include "dgq/dgq_parts.hpp"

#include <string>
#include <utility>

#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/part_checks.hpp"

namespace dgq {
namespace {

std::uint64_t range_entries_per_segment(const DgqV1Params& p, std::int64_t channels) {
  return p.granularity == Granularity::segment_channel ? static_cast<std::uint64_t>(channels) : 1;
}

std::vector<std::uint8_t> range_part_bytes(const DgqV1Encoded& enc) {
  std::vector<std::uint8_t> ranges;
  ranges.reserve(enc.lo.size() * schemes::kRangeBytes);
  for (std::size_t i = 0; i < enc.lo.size(); ++i) schemes::append_range(ranges, enc.lo[i], enc.hi[i]);
  return ranges;
}

std::vector<std::uint8_t> boundary_part_bytes(const DgqV1Encoded& enc) {
  std::vector<std::uint8_t> boundaries;
  boundaries.reserve(enc.boundaries.size() * sizeof(std::uint32_t));
  for (const std::uint32_t b : enc.boundaries) schemes::append_le(boundaries, b);
  return boundaries;
}

// Segments = entries of "ranges" / C; must be 0 for an empty tensor, else in [1, segment budget].
int segments_from_ranges(const Compressed& c, const DgqV1Params& p) {
  const Part* ranges = c.find("ranges");
  if (ranges == nullptr) throw InputError(c.scheme + ": part 'ranges' is missing");
  const std::uint64_t per_segment = range_entries_per_segment(p, c.channels) * schemes::kRangeBytes;
  const std::uint64_t n = ranges->bytes.size();
  const std::uint64_t min_segments = c.tokens > 0 ? 1 : 0;
  const std::uint64_t max_segments = static_cast<std::uint64_t>(rules::segment_budget(c.tokens, p.max_groups, p.win));
  if (per_segment == 0 || n % per_segment != 0 || n / per_segment < min_segments || n / per_segment > max_segments) {
    throw InputError(c.scheme + ": part 'ranges' has " + std::to_string(n) + " bytes, expected " +
                     std::to_string(per_segment) + " per segment for " + std::to_string(min_segments) + " to " +
                     std::to_string(max_segments) + " segments");
  }
  return static_cast<int>(n / per_segment);
}

void read_ranges(const Part& ranges, DgqV1Encoded& enc) {
  const std::size_t entries = ranges.bytes.size() / schemes::kRangeBytes;
  enc.lo.resize(entries);
  enc.hi.resize(entries);
  for (std::size_t i = 0; i < entries; ++i) {
    const schemes::Range r = schemes::read_range(ranges.bytes, i);
    enc.lo[i] = r.lo;
    enc.hi[i] = r.hi;
  }
}

void read_markers(const Compressed& c, DgqV1Encoded& enc) {
  if (enc.params.markers == Markers::table) {
    const std::uint64_t count = enc.segments > 0 ? static_cast<std::uint64_t>(enc.segments - 1) : 0;
    const Part& b = schemes::expect_part(c, "boundaries", count * sizeof(std::uint32_t));
    enc.boundaries.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) enc.boundaries[i] = schemes::read_le<std::uint32_t>(b.bytes, i);
  } else if (enc.params.markers == Markers::bitmap) {
    enc.bitmap = schemes::expect_part(c, "bitmap", static_cast<std::uint64_t>((c.tokens + 7) / 8)).bytes;
  }
}

}  // namespace

void append_dgq_parts(const DgqV1Encoded& enc, Compressed& c) {
  append_dgq_parts(enc, std::vector<std::uint8_t>(enc.codes.begin(), enc.codes.end()), c);
}

void append_dgq_parts(const DgqV1Encoded& enc, std::vector<std::uint8_t> codes, Compressed& c) {
  c.parts.push_back({"codes", std::move(codes)});
  c.parts.push_back({"ranges", range_part_bytes(enc)});
  if (enc.params.markers == Markers::table) {
    c.parts.push_back({"boundaries", boundary_part_bytes(enc)});
  } else if (enc.params.markers == Markers::bitmap) {
    c.parts.push_back({"bitmap", enc.bitmap});
  }
}

DgqPartsView view_dgq_parts(const Compressed& c, const DgqV1Params& p) {
  // Sizes below are products of the shape: a negative one must not wrap into a huge size.
  if (c.tokens < 0 || c.channels < 0) {
    throw InputError(c.scheme + ": negative shape [" + std::to_string(c.tokens) + ", " + std::to_string(c.channels) +
                     "]");
  }
  DgqPartsView view;
  DgqV1Encoded& enc = view.header;
  enc.tokens = c.tokens;
  enc.channels = c.channels;
  enc.dtype = c.dtype;
  enc.params = p;
  const Part& codes = schemes::expect_part(c, "codes", static_cast<std::uint64_t>(c.tokens * c.channels));
  enc.segments = segments_from_ranges(c, p);
  read_ranges(*c.find("ranges"), enc);
  read_markers(c, enc);
  // int8 through the unsigned bytes: same object, signed view.
  view.codes = reinterpret_cast<const std::int8_t*>(codes.bytes.data());
  return view;
}

DgqV1Encoded dgq_encoded_from_parts(const Compressed& c, const DgqV1Params& p) {
  DgqPartsView view = view_dgq_parts(c, p);
  view.header.codes.assign(view.codes, view.codes + c.tokens * c.channels);
  return std::move(view.header);
}

}  // namespace dgq

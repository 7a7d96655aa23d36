// dgq: DGQ v1 (docs/spec.md) behind the Scheme API. Parts: "codes" (tokens*channels int8),
// "ranges" (lo, hi fp32 per range entry, segments*C entries, C = 1 or channels), and per
// marker mode "boundaries" (uint32 per interior edge, table) or "bitmap" (ceil(tokens/8)
// bytes, bitmap); in-band mode stores neither. The segment count is not stored separately:
// the decoder reads it from the size of "ranges", and dgq_decode checks it against the
// markers.
#include <string>
#include <vector>

#include "dgq/dgq.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/pipeline.hpp"
#include "dgq/shape.hpp"
#include "schemes/byte_io.hpp"
#include "schemes/dgq_decode_view.hpp"
#include "schemes/scheme_factories.hpp"
#include "schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {


class DgqScheme final : public Scheme {
 public:
  explicit DgqScheme(const DgqParams& p) : params_(p) {}

  std::string family() const override { return "dgq"; }
  std::string spec() const override { return "dgq:" + params_.to_string(); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    Compressed c = start_compressed(spec(), x, role);
    // The encoder writes the codes straight into their part (int8 through the unsigned
    // bytes: same object, signed view).
    std::vector<std::uint8_t> codes;
    DgqEncoded enc;
    try {
      detail::check_shape(x);  // before sizing the codes by it
      codes.resize(static_cast<std::size_t>(x.tokens * x.channels));
      c.segment_edges = detail::encode_parts(x, params_, enc, reinterpret_cast<std::int8_t*>(codes.data()));
    } catch (const InputError&) {
      // dgq_encode rejects NaN/Inf itself, in its own words and possibly after another error
      // (an overflowing row before it); the scheme reports the first non-finite element in
      // the schemes' uniform words instead. Scanning only on failure spares a pass.
      if (x.data != nullptr && x.channels >= 1) check_finite(x, "dgq");
      throw;
    }
    c.parts.push_back({"codes", std::move(codes)});
    std::vector<std::uint8_t> ranges;
    ranges.reserve(enc.lo.size() * kRangeBytes);
    for (std::size_t i = 0; i < enc.lo.size(); ++i) append_range(ranges, enc.lo[i], enc.hi[i]);
    c.parts.push_back({"ranges", std::move(ranges)});
    if (params_.markers == Markers::table) {
      std::vector<std::uint8_t> boundaries;
      for (const std::uint32_t b : enc.boundaries) append_le(boundaries, b);
      c.parts.push_back({"boundaries", std::move(boundaries)});
    } else if (params_.markers == Markers::bitmap) {
      c.parts.push_back({"bitmap", enc.bitmap});
    }
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    DgqEncoded enc;
    enc.tokens = c.tokens;
    enc.channels = c.channels;
    enc.dtype = c.dtype;
    enc.params = params_;
    const Part& codes = expect_part(c, "codes", static_cast<std::uint64_t>(c.tokens * c.channels));
    enc.segments = segments_from_ranges(c);
    const Part& ranges = *c.find("ranges");
    const std::size_t entries = ranges.bytes.size() / kRangeBytes;
    enc.lo.resize(entries);
    enc.hi.resize(entries);
    for (std::size_t i = 0; i < entries; ++i) {
      const Range r = read_range(ranges.bytes, i);
      enc.lo[i] = r.lo;
      enc.hi[i] = r.hi;
    }
    if (params_.markers == Markers::table) {
      const std::uint64_t count = enc.segments > 0 ? static_cast<std::uint64_t>(enc.segments - 1) : 0;
      const Part& b = expect_part(c, "boundaries", count * sizeof(std::uint32_t));
      enc.boundaries.resize(count);
      for (std::uint64_t i = 0; i < count; ++i) enc.boundaries[i] = read_le<std::uint32_t>(b.bytes, i);
    } else if (params_.markers == Markers::bitmap) {
      enc.bitmap = expect_part(c, "bitmap", static_cast<std::uint64_t>((c.tokens + 7) / 8)).bytes;
    }
    // Decoded straight from the part (int8 through the unsigned bytes: same object, signed
    // view); enc.codes stays empty.
    detail::dgq_decode_codes(enc, reinterpret_cast<const std::int8_t*>(codes.bytes.data()), out);
  }

  // Data-dependent: the upper bound, every tensor using its full segment budget (rule 4).
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType,
                              TensorRole) const override {
    DgqEncoded shape;
    shape.tokens = tokens;
    shape.channels = channels;
    shape.params = params_;
    shape.segments = rules::segment_budget(tokens, params_.max_groups, params_.win);
    return shape.stored_bytes().total();
  }

 private:
  std::uint64_t range_entries_per_segment(std::int64_t channels) const {
    return params_.granularity == Granularity::segment_channel ? static_cast<std::uint64_t>(channels) : 1;
  }

  // Segments = entries of "ranges" / C; must be 0 for an empty tensor, else in [1, max_groups].
  int segments_from_ranges(const Compressed& c) const {
    const Part* ranges = c.find("ranges");
    if (ranges == nullptr) throw InputError(c.scheme + ": part 'ranges' is missing");
    const std::uint64_t per_segment = range_entries_per_segment(c.channels) * kRangeBytes;
    const std::uint64_t n = ranges->bytes.size();
    const std::uint64_t min_segments = c.tokens > 0 ? 1 : 0;
    const std::uint64_t max_segments =
        static_cast<std::uint64_t>(rules::segment_budget(c.tokens, params_.max_groups, params_.win));
    if (per_segment == 0 || n % per_segment != 0 || n / per_segment < min_segments || n / per_segment > max_segments) {
      throw InputError(c.scheme + ": part 'ranges' has " + std::to_string(n) + " bytes, expected " +
                       std::to_string(per_segment) + " per segment for " + std::to_string(min_segments) + " to " +
                       std::to_string(max_segments) + " segments");
    }
    return static_cast<int>(n / per_segment);
  }

  DgqParams params_;
};

}  // namespace

std::unique_ptr<Scheme> make_dgq_scheme(SpecArgs& args) {
  const DgqParams defaults;
  DgqParams p;
  p.win = args.take_int("win", defaults.win, 1, 65536);
  p.group_ratio = args.take_float("group_ratio", defaults.group_ratio);
  p.min_var = args.take_float("min_var", defaults.min_var);
  p.max_groups = args.take_int("max_groups", defaults.max_groups, 1, 8);
  p.granularity = parse_granularity(args.take_string("granularity", granularity_name(defaults.granularity)));
  p.markers = parse_markers(args.take_string("markers", markers_name(defaults.markers)));
  p.validate();
  return std::make_unique<DgqScheme>(p);
}

}  // namespace dgq::schemes

#include "dgq/schemes/dgq2/segments.hpp"

#include <string>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/dgq_pass_one.hpp"
#include "dgq/kernels/online_segments.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"

namespace dgq::schemes::dgq2 {

std::vector<std::uint32_t> choose_edges(const float* basis, std::int64_t quantized, std::int64_t channels,
                                        const Params& p) {
  if (quantized == 0) return {0};
  DgqAnalysis a;
  try {
    // v1 rules 1-3 (token variances, block means, ratios); v1's own budget and selection are
    // replaced by dgq2's budget (rule V2) and rule 5 on the same ratios.
    DgqV1Params v1 = p.seg;
    v1.max_groups = 1;
    a = dgq_analyze(basis, quantized, channels, v1);
  } catch (const InputError& e) {
    throw InputError(std::string("dgq2: ") + e.what());
  }
  return edges_from_ratios(a.block_ratio, quantized, p);
}

std::vector<std::uint32_t> edges_from_ratios(const std::vector<float>& block_ratio, std::int64_t quantized,
                                             const Params& p) {
  std::vector<std::uint32_t> edges{0};
  if (quantized == 0) return edges;
  const std::vector<std::uint32_t> chosen =
      p.seg.boundaries == Boundaries::online
          ? kernels::select_edges_online(block_ratio, quantized, p.seg.group_ratio, p.seg.win,
                                         [&p](std::int64_t seen) { return p.segment_budget(seen); })
          : kernels::select_edges(block_ratio, p.segment_budget(quantized), p.seg.group_ratio, p.seg.win);
  if (p.fixed_boundaries) {
    // The count the variance rule chose, at equal lengths (integer arithmetic, no rounding).
    const std::uint64_t s = chosen.size() + 1, l = static_cast<std::uint64_t>(quantized);
    for (std::uint64_t k = 1; k < s; ++k) edges.push_back(static_cast<std::uint32_t>(k * l / s));
  } else {
    edges.insert(edges.end(), chosen.begin(), chosen.end());
  }
  edges.push_back(static_cast<std::uint32_t>(quantized));
  return edges;
}

std::vector<std::uint8_t> marker_part(const std::vector<std::uint32_t>& edges, std::int64_t quantized, Markers m) {
  std::vector<std::uint8_t> out;
  if (m == Markers::table) {
    for (std::size_t k = 1; k + 1 < edges.size(); ++k) {
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(edges[k] >> (8 * b)));
    }
  } else if (m == Markers::bitmap) {
    out.assign(static_cast<std::size_t>((quantized + 7) / 8), 0);
    for (std::size_t s = 0; s + 1 < edges.size(); ++s) {
      if (s % 2 == 0) continue;  // bit t = segment(t) mod 2
      for (std::uint64_t t = edges[s]; t < edges[s + 1]; ++t) out[t / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
    }
  }
  return out;
}

std::vector<std::uint32_t> edges_from_parts(const std::vector<std::uint8_t>& markers, const std::uint8_t* codes,
                                            std::uint64_t code_bytes, std::int64_t quantized, std::int64_t channels,
                                            const Params& p, const std::string& spec) {
  const auto corrupt = [&spec](const std::string& what) { return InputError(spec + ": corrupt dgq2 data: " + what); };
  std::vector<std::uint32_t> edges{0};
  if (p.seg.markers == Markers::table) {
    if (markers.size() % 4 != 0)
      throw corrupt("part 'markers' has " + std::to_string(markers.size()) +
                    " bytes, not a boundary table (4 per boundary)");
    for (std::size_t i = 0; i < markers.size(); i += 4) {
      const std::uint32_t e = static_cast<std::uint32_t>(markers[i]) | static_cast<std::uint32_t>(markers[i + 1]) << 8 |
                              static_cast<std::uint32_t>(markers[i + 2]) << 16 |
                              static_cast<std::uint32_t>(markers[i + 3]) << 24;
      if (e <= edges.back() || e >= quantized) {
        throw corrupt("boundary " + std::to_string(e) + " is not increasing inside (0, " + std::to_string(quantized) +
                      ")");
      }
      edges.push_back(e);
    }
  } else {
    if (p.seg.markers == Markers::bitmap && markers.size() != static_cast<std::uint64_t>((quantized + 7) / 8)) {
      throw corrupt("part 'markers' has " + std::to_string(markers.size()) + " bytes, expected " +
                    std::to_string((quantized + 7) / 8) + " (a bitmap of " + std::to_string(quantized) + " tokens)");
    }
    if (p.seg.markers == Markers::inband && !markers.empty()) throw corrupt("in-band markers with a markers part");
    const auto is_start = [&](std::int64_t t) {
      if (p.seg.markers == Markers::bitmap) {
        const auto bit = [&](std::int64_t i) { return (markers[static_cast<std::size_t>(i / 8)] >> (i % 8)) & 1u; };
        return bit(t) != bit(t - 1);
      }
      std::uint8_t u = 0;
      unpack_codes(codes, code_bytes, static_cast<std::uint64_t>(t * channels), &u, 1, p.bits);
      return is_inband_marker(u, p.bits);
    };
    if (quantized > 0) {
      const bool marked_first = p.seg.markers == Markers::bitmap ? (markers[0] & 1u) != 0 : [&] {
        std::uint8_t u = 0;
        unpack_codes(codes, code_bytes, 0, &u, 1, p.bits);
        return is_inband_marker(u, p.bits);
      }();
      if (marked_first) throw corrupt("token 0 is marked as a segment start");
    }
    for (std::int64_t t = 1; t < quantized; ++t) {
      if (is_start(t)) edges.push_back(static_cast<std::uint32_t>(t));
    }
  }
  if (quantized > 0) edges.push_back(static_cast<std::uint32_t>(quantized));
  if (edges.size() - 1 > static_cast<std::size_t>(p.seg.max_groups)) {
    throw corrupt(std::to_string(edges.size() - 1) +
                  " segments, more than max_groups = " + std::to_string(p.seg.max_groups));
  }
  return edges;
}

}  // namespace dgq::schemes::dgq2

// Rule C3 (docs/spec.md, "Causal caches"): the first-come selection of segment edges, for dgq's
// and dgq2's boundaries=online.
#include "dgq/kernels/online_segments.hpp"

namespace dgq::kernels {

std::vector<std::uint32_t> select_edges_online(const std::vector<float>& ratios, std::int64_t rows, float group_ratio,
                                               int win, const std::function<int(std::int64_t seen)>& budget) {
  std::vector<std::uint32_t> edges;
  const auto w = static_cast<std::int64_t>(win);
  // ratios[b - 1] belongs to edge b; its following block is complete when (b + 1) * win <= rows.
  for (std::int64_t b = 1; b <= static_cast<std::int64_t>(ratios.size()) && (b + 1) * w <= rows; ++b) {
    // NaN ratios (only from overflowing means) are never candidates, as in rule 3.
    if (!(ratios[static_cast<std::size_t>(b - 1)] < group_ratio)) continue;
    if (static_cast<std::int64_t>(edges.size()) + 1 < budget((b + 1) * w)) {
      edges.push_back(static_cast<std::uint32_t>(b * w));
    }
  }
  return edges;
}

}  // namespace dgq::kernels

// Rules C3 and C4 (docs/spec.md, "Causal caches"): the first-come selection of segment edges and
// the final prefix of a segmented stream, for dgq's and dgq2's causal caches.
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

std::vector<std::uint32_t> online_final_rows(const std::vector<std::uint32_t>& edges, std::int64_t rows, int win,
                                             int group) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(rows > 0 ? rows : 0));
  const auto w = static_cast<std::int64_t>(win);
  std::size_t known = 0;  // edges known at row t: edges[0 .. known-1]
  for (std::int64_t t = 0; t < rows; ++t) {
    while (known < edges.size() && static_cast<std::int64_t>(edges[known]) + w - 1 <= t) ++known;
    const std::int64_t open = known > 0 ? edges[known - 1] : 0;
    std::int64_t final_rows = open;
    if (group > 0) {
      // Rows in complete blocks: every edge below them is known, so none cuts their groups.
      const std::int64_t covered = (t + 1) / w * w;
      if (covered > open) {
        const std::int64_t grouped = open + (covered - open) / group * group;
        if (open == 0 || grouped >= open + w) final_rows = grouped;
      }
    }
    out[static_cast<std::size_t>(t)] = static_cast<std::uint32_t>(final_rows);
  }
  return out;
}

CausalSchedule delayed_schedule(const std::vector<std::uint32_t>& final_rows, std::int64_t delay, std::int64_t tokens,
                                const std::function<std::uint64_t(std::uint32_t final_tokens)>& bytes) {
  CausalSchedule s;
  s.final_tokens.resize(static_cast<std::size_t>(tokens > 0 ? tokens : 0));
  s.final_bytes.resize(s.final_tokens.size());
  std::uint32_t last = 0;
  std::uint64_t last_bytes = bytes(0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::uint32_t c = t < delay ? 0 : final_rows[static_cast<std::size_t>(t - delay)];
    if (c != last) {
      last = c;
      last_bytes = bytes(c);
    }
    s.final_tokens[static_cast<std::size_t>(t)] = c;
    s.final_bytes[static_cast<std::size_t>(t)] = last_bytes;
  }
  return s;
}

}  // namespace dgq::kernels

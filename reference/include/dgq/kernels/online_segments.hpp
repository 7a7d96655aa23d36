#pragma once
// The causal cache's segmentation (docs/spec.md, "Causal caches", rule C3), shared by dgq
// (boundaries=online) and dgq2 (boundaries=online): the first-come selection of change points.
#include <cstdint>
#include <functional>
#include <vector>

namespace dgq::kernels {

// Rule C3: over the block ratios of `rows` rows (rule 3, ratios[b-1] = r_b), only the edges
// whose following block is complete ((b+1)*win <= rows) take part; for b = 1, 2, ... in
// increasing order, edge b*win is accepted iff r_b < group_ratio and (edges accepted so far +
// 1) < budget((b+1)*win), the role's segment budget of the rows seen when the edge is decided.
// Returns the accepted interior edges, increasing.
std::vector<std::uint32_t> select_edges_online(const std::vector<float>& ratios, std::int64_t rows, float group_ratio,
                                               int win, const std::function<int(std::int64_t seen)>& budget);

}  // namespace dgq::kernels

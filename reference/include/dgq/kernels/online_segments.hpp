#pragma once
// The causal cache's segmentation (docs/spec.md, "Causal caches", rules C3 and C4), shared by
// dgq (boundaries=online) and dgq2 (boundaries=online, and the causal form of adaptive): the
// first-come selection of change points, and how many rows of a stream hold their final value
// after each row.
#include <cstdint>
#include <functional>
#include <vector>

#include "dgq/causal.hpp"

namespace dgq::kernels {

// Rule C3: over the block ratios of `rows` rows (rule 3, ratios[b-1] = r_b), only the edges
// whose following block is complete ((b+1)*win <= rows) take part; for b = 1, 2, ... in
// increasing order, edge b*win is accepted iff r_b < group_ratio and (edges accepted so far +
// 1) < budget((b+1)*win), the role's segment budget of the rows seen when the edge is decided.
// Returns the accepted interior edges, increasing.
std::vector<std::uint32_t> select_edges_online(const std::vector<float>& ratios, std::int64_t rows, float group_ratio,
                                               int win, const std::function<int(std::int64_t seen)>& budget);

// Rule C4 for a stream of `rows` rows cut at `edges` (select_edges_online over all of them): for
// t = 0 .. rows-1, how many rows (a prefix) hold their final value once row t has arrived.
// group = 0 (segment, segment-channel): the start of the open segment, an edge e being known
// once its following block is complete (at row e + win - 1). group = G
// (segment-channel-group): that start plus the open segment's groups of G rows that lie in
// complete blocks (no later edge can cut them), except that a prefix never ends inside the
// first block of a segment other than the first (a compression of that prefix could not see
// the segment's edge: rule C4 says why).
std::vector<std::uint32_t> online_final_rows(const std::vector<std::uint32_t>& edges, std::int64_t rows, int win,
                                             int group);

// A causal schedule from final_rows (one entry per row of the quantized stream), delayed by
// `delay` tokens (dgq2's residual): final_tokens[T] = final_rows[T - delay], 0 for T < delay,
// T = 0 .. tokens-1 (final_rows must hold at least tokens - delay entries); final_bytes[T] =
// bytes(c) for c = final_tokens[T], computed once per distinct c.
CausalSchedule delayed_schedule(const std::vector<std::uint32_t>& final_rows, std::int64_t delay, std::int64_t tokens,
                                const std::function<std::uint64_t(std::uint32_t final_tokens)>& bytes);

}  // namespace dgq::kernels

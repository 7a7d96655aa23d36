#pragma once
// DGQ v3 rule W3: the variance signal spent on bits. Token t of a role is promoted to the wide
// code (hi_bits) iff
//   * fewer than hi_frac * (t + 1) of tokens 0 .. t-1 were promoted (the budget, at every prefix), and
//   * t = 0, or v_t > hi_ratio * (mean of v_0 .. v_{t-1}),
// where v_t is DGQ's token variance (v1 rule 1, canonical sums, without the min_var floor) of the
// unrotated input row. Decided from tokens 0 .. t only, so a prefix's widths are the widths'
// prefix (the causal cache needs nothing else).
#include <cstdint>
#include <vector>

namespace dgq::kernels {
struct CpuKernels;
}

namespace dgq::schemes::dgq3 {

struct WidthRule {
  double fraction = 0.0;  // hi_frac: at most this share of the tokens promoted
  double ratio = 2.0;     // hi_ratio: a token's variance against the running mean
};

// promoted[t] for the tokens rows of x (fp32, row-major). fraction == 0: none.
std::vector<std::uint8_t> promoted_tokens(const kernels::CpuKernels& k, const float* x, std::int64_t tokens,
                                          std::int64_t channels, const WidthRule& rule);

}  // namespace dgq::schemes::dgq3

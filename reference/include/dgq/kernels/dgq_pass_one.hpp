#pragma once
// DGQ v1's pass 1 and its segmentation statistics (docs/spec.md rules 0-3 and 5), public because
// dgq2 cuts its segments with them too: one definition for both families, neither reaching
// into the other's files.
#include <cstdint>
#include <vector>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/tensor.hpp"

namespace dgq::kernels {

// Pass 1 over the tensor: rule 0 (conversion, finiteness), rule 1 (token variances) and the
// min/max of every block of `win` tokens, per channel (C = channels) or over the block (C = 1),
// from which rule 6 builds segment ranges without reading the tensor again (segment edges
// always sit on block edges).
struct PassOne {
  std::vector<float> token_var;           // v_t
  std::int64_t range_channels = 1;        // C
  std::vector<float> block_lo, block_hi;  // [blocks][C]
};
// With k's row kernels; throws InputError naming the first NaN/Inf (token, channel) or a token
// whose variance is not finite.
PassOne scan_tensor(const CpuKernels& k, ConstTensor x, const DgqV1Params& p);

// Rule 2.
std::vector<float> block_means(const std::vector<float>& token_var, int win);
// Rule 3: r_b for b = 1..blocks-1 at index b-1.
std::vector<float> block_ratios(const std::vector<float>& means);
// Rule 5: accepted interior edges (token indices), increasing.
std::vector<std::uint32_t> select_edges(const std::vector<float>& ratios, int budget, float group_ratio, int win);

}  // namespace dgq::kernels

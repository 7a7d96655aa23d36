// Rules 1-5 (rule C3's selection with boundaries=online) exposed on their own (dgq_analyze), for
// tests and the CUDA stage-by-stage comparison.
#include "dgq/element_rules.hpp"
#include "dgq/kernels/online_segments.hpp"
#include "pipeline.hpp"
#include "shape.hpp"

namespace dgq {
namespace detail {

DgqAnalysis analyze_pass(const PassOne& pass, std::int64_t tokens, const DgqV1Params& p) {
  DgqAnalysis a;
  a.token_var = pass.token_var;
  a.block_mean = block_means(a.token_var, p.win);
  a.block_ratio = block_ratios(a.block_mean);
  a.budget = rules::segment_budget(tokens, p.max_groups, p.win);
  if (p.boundaries == Boundaries::online) {
    // Rule C3: first come, each edge under the budget of the tokens seen when it is decided.
    a.edges = kernels::select_edges_online(a.block_ratio, tokens, p.group_ratio, p.win, [&p](std::int64_t seen) {
      return rules::segment_budget(seen, p.max_groups, p.win);
    });
  } else {
    a.edges = select_edges(a.block_ratio, a.budget, p.group_ratio, p.win);
  }
  return a;
}

}  // namespace detail

DgqAnalysis dgq_analyze(const float* x, std::int64_t tokens, std::int64_t channels, const DgqV1Params& p) {
  p.validate();
  const ConstTensor view{x, DType::f32, tokens, channels};
  detail::check_shape(view);
  if (tokens == 0) return {};
  return detail::analyze_pass(detail::scan_tensor(kernels::kernels_for(Device::cpu), view, p), tokens, p);
}

}  // namespace dgq

// Rule 1: canonical sums and the per-token variance.
#include <cmath>
#include <string>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "pipeline.hpp"
#include "row_kernels.hpp"

namespace dgq {

float canonical_sum(const float* x, std::int64_t n) { return kernels::kernels_for(Device::cpu).canonical_sum(x, n); }

float canonical_sum_of_squares(const float* x, std::int64_t n, float mean) {
  return kernels::kernels_for(Device::cpu).canonical_sum_of_squares(x, n, mean);
}

namespace detail {

float token_variance(const kernels::RowStats& st, std::int64_t channels, float min_var, std::int64_t token) {
  const float d = static_cast<float>(channels);
  const float var = st.sum_squares / d;
  // Only fp32/bf16 rows with |x| near FLT_MAX get here; fmaxf would silently turn a NaN
  // variance into min_var, so the statistics are rejected instead (rule 1).
  if (!std::isfinite(var))
    throw InputError("variance of token " + std::to_string(token) + " overflows fp32 (values too large)");
  // fmaxf(var, min_var) for a finite var, written as a comparison so it inlines (the sign of a
  // zero result cannot change any later byte: block sums start at +0.0f).
  return var < min_var ? min_var : var;
}

}  // namespace detail
}  // namespace dgq

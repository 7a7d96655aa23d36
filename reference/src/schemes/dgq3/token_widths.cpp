#include "token_widths.hpp"

#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::schemes::dgq3 {

std::vector<std::uint8_t> promoted_tokens(const kernels::CpuKernels& k, const float* x, std::int64_t tokens,
                                          std::int64_t channels, const WidthRule& rule) {
  std::vector<std::uint8_t> promoted(static_cast<std::size_t>(tokens), 0);
  if (rule.fraction <= 0.0) return promoted;
  const float d = static_cast<float>(channels);
  double variance_sum = 0.0;  // v_0 + ... + v_{t-1}, in fp64, in token order
  std::int64_t count = 0;     // tokens promoted so far
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* row = x + t * channels;
    const float mean = k.canonical_sum(row, channels) / d;
    const double v = static_cast<double>(k.canonical_sum_of_squares(row, channels, mean) / d);
    const bool within_budget = static_cast<double>(count) < rule.fraction * static_cast<double>(t + 1);
    const bool outstanding = t == 0 || v > rule.ratio * (variance_sum / static_cast<double>(t));
    if (within_budget && outstanding) {
      promoted[static_cast<std::size_t>(t)] = 1;
      ++count;
    }
    variance_sum += v;
  }
  return promoted;
}

}  // namespace dgq::schemes::dgq3

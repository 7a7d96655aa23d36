// Rules 2-5: block means, candidate ratios, the budget and the selection of segment edges.
#include <algorithm>
#include <numeric>

#include "dgq/element_rules.hpp"
#include "pipeline.hpp"

namespace dgq::kernels {

std::vector<float> block_means(const std::vector<float>& token_var, int win) {
  const std::size_t L = token_var.size();
  std::vector<float> means;
  means.reserve((L + win - 1) / win);
  for (std::size_t start = 0; start < L; start += static_cast<std::size_t>(win)) {
    const std::size_t end = std::min(L, start + static_cast<std::size_t>(win));
    float sum = 0.0f;  // sequential, increasing t (rule 2)
    for (std::size_t t = start; t < end; ++t) sum = sum + token_var[t];
    means.push_back(sum / static_cast<float>(end - start));
  }
  return means;
}

std::vector<float> block_ratios(const std::vector<float>& means) {
  std::vector<float> ratios;
  for (std::size_t b = 1; b < means.size(); ++b) ratios.push_back(rules::block_ratio(means[b - 1], means[b]));
  return ratios;
}
std::vector<std::uint32_t> select_edges(const std::vector<float>& ratios, int budget, float group_ratio, int win) {
  // ratios[i] belongs to block edge b = i + 1.
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < ratios.size(); ++i)
    if (ratios[i] < group_ratio) candidates.push_back(i);
  // (r_b, b) ascending; candidates hold no NaN (NaN < group_ratio is false).
  std::sort(candidates.begin(), candidates.end(),
            [&](std::size_t a, std::size_t b) { return ratios[a] != ratios[b] ? ratios[a] < ratios[b] : a < b; });
  const std::size_t accept = budget > 1 ? static_cast<std::size_t>(budget - 1) : 0;
  if (candidates.size() > accept) candidates.resize(accept);
  std::vector<std::uint32_t> edges;
  for (std::size_t i : candidates) edges.push_back(static_cast<std::uint32_t>((i + 1) * static_cast<std::size_t>(win)));
  std::sort(edges.begin(), edges.end());
  return edges;
}

}  // namespace dgq::kernels

namespace dgq::detail {

std::vector<std::uint32_t> with_ends(const std::vector<std::uint32_t>& interior, std::int64_t tokens) {
  std::vector<std::uint32_t> edges{0};  // L = 0: just {0}, i.e. no segment
  if (tokens == 0) return edges;
  edges.insert(edges.end(), interior.begin(), interior.end());
  edges.push_back(static_cast<std::uint32_t>(tokens));
  return edges;
}

}  // namespace dgq::detail

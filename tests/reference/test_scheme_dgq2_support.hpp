#pragma once
// Helpers of the dgq2 scheme tests (test_scheme_dgq2.cpp, test_scheme_dgq2_errors.cpp).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "test_scheme_support.hpp"

namespace dgq::test::dgq2_tests {

// t is the first token of a segment other than the first (where in-band markers go).
inline bool starts_segment(const std::vector<std::uint32_t>& edges, std::int64_t t) {
  return edges.size() > 2 &&
         std::find(edges.begin() + 1, edges.end() - 1, static_cast<std::uint32_t>(t)) != edges.end() - 1;
}

// A tensor whose spread steps up and down, so that v1's rule cuts it into several segments.
inline OwnedTensor stepped_tensor(std::int64_t tokens, std::int64_t channels, std::uint64_t stream, DType dtype) {
  const std::vector<float> g = gaussian_values(tokens * channels, stream);
  std::vector<float> v(g.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float spread = (t / 48) % 3 == 1 ? 8.0f : ((t / 48) % 3 == 2 ? 0.3f : 1.5f);
    for (std::int64_t d = 0; d < channels; ++d)
      v[t * channels + d] = spread * g[t * channels + d] + (d % 7 == 0 ? 3.0f : 0.0f);
  }
  return tensor_from(v, tokens, channels, dtype);
}

}  // namespace dgq::test::dgq2_tests

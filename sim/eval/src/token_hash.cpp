#include "token_hash.hpp"

namespace dgq::sim {

std::uint64_t token_sequence_hash(const std::vector<std::int32_t>& tokens) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::int32_t t : tokens)
    for (int b = 0; b < 4; ++b) {
      h ^= (static_cast<std::uint32_t>(t) >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  return h;
}

}  // namespace dgq::sim

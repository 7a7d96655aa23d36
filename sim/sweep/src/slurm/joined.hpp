#pragma once
// Job ids and shard indices in messages ("1, 3") and in --dependency lists ("12:13").
#include <string>
#include <vector>

namespace dgq::sim {

inline std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace dgq::sim

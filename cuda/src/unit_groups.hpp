#pragma once
// Host batches may mix shapes and dtypes; the device path wants equally shaped units back to
// back. Units are grouped by key, each group keeping the callers' order.
#include <cstddef>
#include <map>
#include <vector>

namespace dgq::cuda {

template <class Key, class Item, class KeyOf>
std::vector<std::vector<std::size_t>> group_indices(const std::vector<Item>& items, KeyOf key_of) {
  std::map<Key, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto [it, inserted] = group_of.try_emplace(key_of(items[i]), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace dgq::cuda

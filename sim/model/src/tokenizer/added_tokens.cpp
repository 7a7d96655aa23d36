#include <algorithm>

#include "tokenizer/added_tokens.hpp"

namespace dgq::sim::tokenizer {

AddedTokens::AddedTokens(const std::vector<std::string>& tokens, const std::vector<std::int32_t>& ids)
    : by_first_byte_(256) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (!tokens[i].empty()) by_first_byte_[static_cast<unsigned char>(tokens[i][0])].emplace_back(tokens[i], ids[i]);
  for (auto& list : by_first_byte_)
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<Fragment> AddedTokens::split(std::string_view text) const {
  std::vector<Fragment> out;
  std::size_t raw_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::pair<std::string, std::int32_t>* match = nullptr;
    for (const auto& candidate : by_first_byte_[static_cast<unsigned char>(text[i])])
      if (text.compare(i, candidate.first.size(), candidate.first) == 0) {
        match = &candidate;
        break;
      }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > raw_start) out.push_back({-1, text.substr(raw_start, i - raw_start)});
    out.push_back({match->second, text.substr(i, match->first.size())});
    i += match->first.size();
    raw_start = i;
  }
  if (raw_start < text.size()) out.push_back({-1, text.substr(raw_start)});
  return out;
}

}  // namespace dgq::sim::tokenizer

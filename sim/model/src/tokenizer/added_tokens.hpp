#pragma once
// The user-defined tokens of a vocabulary, matched in the text before the model's own splitting
// (llama.cpp's tokenizer_st_partition with parse_special off; Gemma's whitespace runs and HTML
// tags are such tokens).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dgq::sim::tokenizer {

// The fragments of `text` in order: a user-defined token's id (>= 0) for each of its matches,
// leftmost-longest, or -1 for the raw text between them (added_tokens.cpp).
struct Fragment {
  std::int32_t token;
  std::string_view text;
};
class AddedTokens {
 public:
  explicit AddedTokens(const std::vector<std::string>& tokens, const std::vector<std::int32_t>& ids);
  std::vector<Fragment> split(std::string_view text) const;

 private:
  // By first byte: the tokens starting with it, longest first.
  std::vector<std::vector<std::pair<std::string, std::int32_t>>> by_first_byte_;
};

}  // namespace dgq::sim::tokenizer

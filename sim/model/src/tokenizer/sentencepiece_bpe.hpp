#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/tokenizer.hpp"

namespace dgq::sim::tokenizer {

class SentencePieceBpe final : public Tokenizer {
 public:
  SentencePieceBpe(const std::vector<std::string>& tokens, const std::vector<double>& scores, bool add_space_prefix,
                   AddedTokens added);
  std::vector<std::int32_t> encode(std::string_view text) const override;

 private:
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::vector<float> scores_;
  std::int32_t byte_tokens_[256];
  bool add_space_prefix_;
  AddedTokens added_;
  void encode_fragment(const std::string& text, std::vector<std::int32_t>& out) const;
};

}  // namespace dgq::sim::tokenizer

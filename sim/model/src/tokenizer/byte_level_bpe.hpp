#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/pre_tokenizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace dgq::sim::tokenizer {

class ByteLevelBpe final : public Tokenizer {
 public:
  // merges: tokenizer.ggml.merges ("left right", rank = position).
  ByteLevelBpe(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
               std::unique_ptr<PreTokenizer> pre, AddedTokens added);
  std::vector<std::int32_t> encode(std::string_view text) const override;

 private:
  std::unique_ptr<PreTokenizer> pre_;
  AddedTokens added_;
  std::vector<std::string> byte_chars_;
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::unordered_map<std::string, int> ranks_;
  void encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const;
};

}  // namespace dgq::sim::tokenizer

// The tokenizer a GGUF describes (tokenizer.ggml.*), or an InputError naming what dgq does not
// implement.
#include "dgq/errors.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "tokenizer/byte_level_bpe.hpp"
#include "tokenizer/sentencepiece_bpe.hpp"
#include "tokenizer/tokenizer.hpp"

namespace dgq::sim::tokenizer {
namespace {

constexpr int kUserDefined = 4;  // llama_token_type LLAMA_TOKEN_TYPE_USER_DEFINED

// The user-defined tokens, matched in the text before the model's own splitting (llama.cpp's
// tokenizer_st_partition with parse_special off: control tokens stay plain text).
AddedTokens user_defined(const gguf::File& f, const std::vector<std::string>& tokens) {
  std::vector<std::string> texts;
  std::vector<std::int32_t> ids;
  if (f.find("tokenizer.ggml.token_type") != nullptr) {
    const std::vector<double>& types = f.number_array("tokenizer.ggml.token_type");
    for (std::size_t i = 0; i < types.size() && i < tokens.size(); ++i)
      if (types[i] == kUserDefined) {
        texts.push_back(tokens[i]);
        ids.push_back(static_cast<std::int32_t>(i));
      }
  }
  return AddedTokens(texts, ids);
}

}  // namespace

std::unique_ptr<Tokenizer> from_gguf(const gguf::File& f) {
  const std::string model = f.string_value("tokenizer.ggml.model");
  const std::vector<std::string>& tokens = f.string_array("tokenizer.ggml.tokens");
  if (model == "gpt2") {
    const std::string pre = f.string_value("tokenizer.ggml.pre", "default");
    std::unique_ptr<PreTokenizer> splitter = PreTokenizer::named(pre);
    if (!splitter)
      throw InputError(f.path() + ": GGUF tokenizer.ggml.pre '" + one_line(pre) +
                       "': dgq does not implement this pre-tokenizer (" + PreTokenizer::known_names() + ")");
    return std::make_unique<ByteLevelBpe>(tokens, f.string_array("tokenizer.ggml.merges"), std::move(splitter),
                                          user_defined(f, tokens));
  }
  if (model == "llama") {
    const std::vector<double>& scores = f.number_array("tokenizer.ggml.scores");
    if (scores.size() != tokens.size())
      throw InputError(f.path() + ": GGUF tokenizer.ggml.scores has " + std::to_string(scores.size()) +
                       " entries, tokenizer.ggml.tokens " + std::to_string(tokens.size()));
    // llama.cpp's default for SentencePiece vocabularies when the key is absent: a space prefix.
    const bool add_space_prefix = f.integer_value("tokenizer.ggml.add_space_prefix", 1) != 0;
    return std::make_unique<SentencePieceBpe>(tokens, scores, add_space_prefix, user_defined(f, tokens));
  }
  throw InputError(f.path() + ": GGUF tokenizer.ggml.model '" + one_line(model) +
                   "': dgq tokenizes text only for gpt2 (byte-level BPE) and llama (SentencePiece) vocabularies");
}

}  // namespace dgq::sim::tokenizer

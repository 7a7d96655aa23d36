#pragma once
// llama.cpp's BPE pre-tokenizers (llama-vocab.cpp, llm_tokenizer_bpe): a list of regexes applied
// one after the other, each splitting every piece into its matches and the text between them
// (both kept), evaluated with ICU's regex engine (\p{L}, \p{N} and \s as Unicode defines them).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dgq::sim::tokenizer {

class PreTokenizer {
 public:
  // The regexes of tokenizer.ggml.pre `name`; nullptr when dgq does not know it.
  static std::unique_ptr<PreTokenizer> named(const std::string& name);
  ~PreTokenizer();
  std::vector<std::string_view> split(std::string_view text) const;
  // The names known, for error messages.
  static std::string known_names();

 private:
  struct Regexes;
  explicit PreTokenizer(std::unique_ptr<Regexes> regexes);
  std::unique_ptr<Regexes> regexes_;
};

}  // namespace dgq::sim::tokenizer

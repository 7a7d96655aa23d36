#include "tokenizer/pre_tokenizer.hpp"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include <stdexcept>
#include <utility>

namespace dgq::sim::tokenizer {
namespace {

// GPT-2's pattern, and the adapted Llama 3 / Qwen2 ones (llama.cpp's, which spell the original
// case-insensitive contractions out so that std::regex takes them).
constexpr const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char* kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct Known {
  const char* name;
  std::vector<const char*> regexes;
};

const std::vector<Known>& known() {
  static const std::vector<Known> list = {
      {"smollm", {"\\p{N}", kGpt2}},  // every digit on its own, then GPT-2's
      {"gpt-2", {kGpt2}},
      {"llama-bpe", {kLlama3}},
      {"llama3", {kLlama3}},
      {"qwen2", {kQwen2}},
  };
  return list;
}

}  // namespace

struct PreTokenizer::Regexes {
  std::vector<std::unique_ptr<icu::RegexPattern>> patterns;
};

PreTokenizer::PreTokenizer(std::unique_ptr<Regexes> regexes) : regexes_(std::move(regexes)) {}
PreTokenizer::~PreTokenizer() = default;

std::unique_ptr<PreTokenizer> PreTokenizer::named(const std::string& name) {
  for (const Known& k : known()) {
    if (name != k.name) continue;
    auto regexes = std::make_unique<Regexes>();
    for (const char* expr : k.regexes) {
      UErrorCode status = U_ZERO_ERROR;
      UParseError where{};
      regexes->patterns.emplace_back(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(expr), where, status));
      if (U_FAILURE(status)) throw std::logic_error(std::string("pre-tokenizer regex does not compile: ") + expr);
    }
    return std::unique_ptr<PreTokenizer>(new PreTokenizer(std::move(regexes)));
  }
  return nullptr;
}

std::string PreTokenizer::known_names() {
  std::string names;
  for (const Known& k : known()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces{text};
  for (const auto& pattern : regexes_->patterns) {
    std::vector<std::string_view> next;
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> matcher(pattern->matcher(status));
    for (const std::string_view piece : pieces) {
      if (piece.empty()) continue;
      // The piece alone is the matcher's input: a lookahead does not see past it (as llama.cpp
      // runs each regex on each piece). Indexes are the UTF-8 bytes of the piece.
      UText* input = utext_openUTF8(nullptr, piece.data(), static_cast<int64_t>(piece.size()), &status);
      matcher->reset(input);
      std::size_t start = 0;
      while (matcher->find(status) && U_SUCCESS(status)) {
        const auto begin = static_cast<std::size_t>(matcher->start64(status));
        const auto end = static_cast<std::size_t>(matcher->end64(status));
        if (begin > start) next.push_back(piece.substr(start, begin - start));
        if (end > begin) next.push_back(piece.substr(begin, end - begin));
        start = end;
      }
      if (start < piece.size()) next.push_back(piece.substr(start));
      matcher->reset(icu::UnicodeString());
      utext_close(input);
      if (U_FAILURE(status)) throw std::logic_error("pre-tokenizer: ICU regex failed");
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace dgq::sim::tokenizer

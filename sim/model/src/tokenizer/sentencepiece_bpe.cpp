// SentencePiece BPE as llama.cpp runs it (llm_tokenizer_spm_session): the fragment's spaces
// become U+2581, its UTF-8 characters are the first symbols, and the adjacent pair whose joined
// text is a token of highest score is merged first (the leftmost pair on a tie) until no pair
// joins into a token. A symbol that is no token is written as its bytes' <0xXX> tokens.
#include <cstdio>
#include <queue>

#include "dgq/errors.hpp"
#include "tokenizer/sentencepiece_bpe.hpp"

namespace dgq::sim::tokenizer {
namespace {

constexpr const char* kSpaceMark = "\xE2\x96\x81";  // U+2581

std::size_t utf8_length(unsigned char lead) {
  static const std::size_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lengths[lead >> 4];
}

struct Symbol {
  std::size_t begin, size;
  int prev, next;
};

struct Bigram {
  int left, right;
  float score;
  std::size_t size;
};

struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SentencePieceBpe::SentencePieceBpe(const std::vector<std::string>& tokens, const std::vector<double>& scores,
                                   bool add_space_prefix, AddedTokens added)
    : add_space_prefix_(add_space_prefix), added_(std::move(added)) {
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab_.emplace(tokens[i], static_cast<std::int32_t>(i));
  scores_.assign(scores.begin(), scores.end());  // stored as float32 in the GGUF: exact
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const auto it = vocab_.find(name);
    byte_tokens_[b] = it == vocab_.end() ? -1 : it->second;
  }
}

void SentencePieceBpe::encode_fragment(const std::string& text, std::vector<std::int32_t>& out) const {
  std::vector<Symbol> symbols;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = std::min(utf8_length(static_cast<unsigned char>(text[at])), text.size() - at);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({at, n, index - 1, at + n == text.size() ? -1 : index + 1});
    at += n;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const auto it = vocab_.find(text.substr(symbols[left].begin, symbols[left].size + symbols[right].size));
    if (it == vocab_.end()) return;
    queue.push({left, right, scores_[static_cast<std::size_t>(it->second)], symbols[left].size + symbols[right].size});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<std::size_t>(b.left)];
    Symbol& right = symbols[static_cast<std::size_t>(b.right)];
    if (left.size == 0 || right.size == 0 || left.size + right.size != b.size) continue;  // stale
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = b.left;
    try_pair(left.prev, b.left);
    try_pair(b.left, left.next);
  }
  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[static_cast<std::size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<std::size_t>(i)];
    const auto it = vocab_.find(text.substr(s.begin, s.size));
    if (it != vocab_.end()) {
      out.push_back(it->second);
      continue;
    }
    // Merged symbols are tokens by construction: only a single character gets here.
    for (std::size_t j = 0; j < s.size; ++j) {
      const std::int32_t id = byte_tokens_[static_cast<unsigned char>(text[s.begin + j])];
      if (id < 0)
        throw InputError("tokenizer: the character '" + one_line(text.substr(s.begin, s.size)) +
                         "' is no token and the vocabulary has no <0xXX> byte tokens");
      out.push_back(id);
    }
  }
}

std::vector<std::int32_t> SentencePieceBpe::encode(std::string_view text) const {
  std::vector<std::int32_t> out;
  // llama.cpp puts the space prefix (when the vocabulary asks for one) before the text and after
  // every added token.
  bool after_token = true;
  for (const Fragment& fragment : added_.split(text)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      after_token = true;
      continue;
    }
    std::string escaped = add_space_prefix_ && after_token ? kSpaceMark : "";
    for (const char c : fragment.text) {
      if (c == ' ')
        escaped += kSpaceMark;
      else
        escaped += c;
    }
    encode_fragment(escaped, out);
    after_token = false;
  }
  return out;
}

}  // namespace dgq::sim::tokenizer

// GPT-2 byte-level BPE (llama.cpp's llm_tokenizer_bpe_session): each pre-tokenized piece's bytes
// become printable characters (GPT-2's bytes_to_unicode), then the adjacent pair of lowest merge
// rank is merged, leftmost first on a tie, until no pair is in tokenizer.ggml.merges.
#include <limits>
#include <string>
#include <unordered_map>

#include "dgq/errors.hpp"
#include "tokenizer/byte_level_bpe.hpp"

namespace dgq::sim::tokenizer {
namespace {

std::string utf8(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for 256 + n.
std::vector<std::string> byte_characters() {
  std::vector<std::string> chars(256);
  std::uint32_t next = 256;
  for (std::uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    chars[b] = utf8(printable ? b : next++);
  }
  return chars;
}

}  // namespace

ByteLevelBpe::ByteLevelBpe(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
                           std::unique_ptr<PreTokenizer> pre, AddedTokens added)
    : pre_(std::move(pre)), added_(std::move(added)), byte_chars_(byte_characters()) {
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab_.emplace(tokens[i], static_cast<std::int32_t>(i));
  for (std::size_t i = 0; i < merges.size(); ++i) ranks_.emplace(merges[i], static_cast<int>(i));
}

void ByteLevelBpe::encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const {
  std::vector<std::string> symbols;
  for (const char c : piece) symbols.push_back(byte_chars_[static_cast<unsigned char>(c)]);
  while (symbols.size() > 1) {
    int best = std::numeric_limits<int>::max();
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = ranks_.find(symbols[i] + " " + symbols[i + 1]);
      if (it != ranks_.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<int>::max()) break;
    symbols[at] += symbols[at + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  for (const std::string& s : symbols) {
    const auto it = vocab_.find(s);
    if (it == vocab_.end())
      throw InputError("tokenizer: the piece '" + one_line(s) +
                       "' is not in the vocabulary (a byte-level BPE "
                       "vocabulary holds every byte)");
    out.push_back(it->second);
  }
}

std::vector<std::int32_t> ByteLevelBpe::encode(std::string_view text) const {
  std::vector<std::int32_t> out;
  std::unordered_map<std::string, std::vector<std::int32_t>> memo;  // pieces repeat (words, indents)
  for (const Fragment& fragment : added_.split(text)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      continue;
    }
    for (const std::string_view piece : pre_->split(fragment.text)) {
      auto [it, fresh] = memo.try_emplace(std::string(piece));
      if (fresh) encode_piece(piece, it->second);
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
  }
  return out;
}

}  // namespace dgq::sim::tokenizer

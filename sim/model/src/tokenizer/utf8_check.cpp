// Text for a tokenizer must be UTF-8: byte-level BPE vocabularies hold no token for bytes that
// never occur in UTF-8 (0xC0, 0xC1, 0xF5..0xFF), and llama.cpp replaces invalid sequences by
// U+FFFD, a choice dgq does not copy silently: the text is refused instead, at the first bad byte.
#include "tokenizer/tokenizer.hpp"

namespace dgq::sim::tokenizer {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    std::size_t n;
    std::uint32_t cp;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 2, cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 3, cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 4, cp = b & 0x07;
    } else {
      return i;
    }
    if (i + n > text.size()) return i;
    for (std::size_t k = 1; k < n; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += n;
  }
  return std::nullopt;
}

}  // namespace dgq::sim::tokenizer

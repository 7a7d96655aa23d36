#pragma once
// The model's input: token files (docs/eval.md, "Token files"), and plain text tokenized with a
// GGUF's own tokenizer (docs/eval.md, "Text files").
#include <cstdint>
#include <string>
#include <vector>

namespace dgq::sim {

struct TokenText {
  std::string model, kind;   // the tokenizer's model name; the prompt kind ("code", ...)
  std::string tokenizer_id;  // the tokenizer's identity (attribute tokenizer_id), empty in older files
  double noise_rate = 0;
  std::vector<std::int32_t> tokens;
};
// Throws InputError naming the file and dataset/attribute at fault.
TokenText read_token_file(const std::string& path);
// Writes a token file (through PATH.partial) with the text the tokens spell as /text.
void write_token_file(const std::string& path, const TokenText& tokens, const std::string& text);
// `text` (UTF-8) tokenized with the tokenizer of the GGUF at `gguf_path`, as a token text of kind
// "text" carrying the model's name and tokenizer identity.
TokenText tokenize_with_gguf(const std::string& gguf_path, const std::string& text);
// The whole file at `path`, checked as UTF-8 (InputError when it cannot be read, is empty or is
// not UTF-8, naming the first bad byte).
std::string read_text_file(const std::string& path);
inline constexpr std::int64_t kTokenFormatVersion = 1;

}  // namespace dgq::sim

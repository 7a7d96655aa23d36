#pragma once
// Text to token ids with a GGUF's own tokenizer, as llama.cpp tokenizes it (llama-vocab.cpp,
// with parse_special off: control tokens in the text are plain text, user-defined tokens are
// matched first). Two kinds, by tokenizer.ggml.model:
//   gpt2   byte-level BPE (SmolLM2, Qwen, Llama 3): pre-tokenizer regexes by tokenizer.ggml.pre
//          (pre_tokenizer.cpp), then the merges (byte_level_bpe.cpp);
//   llama  SentencePiece BPE (Gemma): spaces as U+2581, pairs merged by score, unknown
//          characters as <0xXX> byte tokens (sentencepiece_bpe.cpp).
// Any other model or pre-tokenizer is refused by name. No BOS is added (the runner adds it).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dgq::sim::gguf {
class File;
}

namespace dgq::sim::tokenizer {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<std::int32_t> encode(std::string_view text) const = 0;
};

// The byte offset of the first byte of `text` that does not start a valid UTF-8 sequence (strict:
// no overlong forms, surrogates or code points beyond U+10FFFF); nullopt when the text is UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// The GGUF's tokenizer; InputError naming the file and the key it cannot use.
std::unique_ptr<Tokenizer> from_gguf(const gguf::File& f);

}  // namespace dgq::sim::tokenizer

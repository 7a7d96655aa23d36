// Plain text tokenized with a GGUF model's own tokenizer (tokenizer/), in place of a token file
// made by tools/make-eval-texts.py (`dgq eval --text-file`, `dgq tokenize`).
#include <fstream>
#include <iterator>
#include <sstream>

#include "dgq/errors.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "dgq/sim/model/tokenizer_id.hpp"
#include "dgq/sim/model/tokens.hpp"
#include "model_sources.hpp"
#include "tokenizer/tokenizer.hpp"

namespace dgq::sim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the text file");
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw InputError(path + ": cannot read the text file");
  if (text.str().empty()) throw InputError(path + ": the text file is empty");
  if (const auto at = tokenizer::first_invalid_utf8(text.str()))
    throw InputError(path + ": not UTF-8: byte " + std::to_string(*at) + " does not start a valid sequence");
  return text.str();
}

TokenText tokenize_with_gguf(const std::string& gguf_path, const std::string& text) {
  const gguf::File f(gguf_path);
  TokenText t;
  t.kind = "text";
  t.tokenizer_id = tokenizer_id(f);  // matched by identity: the model read from the same GGUF has it
  t.model = gguf_model_name(f);
  t.tokens = tokenizer::from_gguf(f)->encode(text);
  return t;
}

}  // namespace dgq::sim

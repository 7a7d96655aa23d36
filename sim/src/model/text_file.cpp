// `dgq eval --text-file TEXT.txt`: the text tokenized with the GGUF model's own tokenizer
// (sim/src/tokenizer), in place of a token file made by tools/make_eval_texts.py.
#include <fstream>
#include <iterator>
#include <sstream>

#include "dgq/errors.hpp"
#include "dgq/sim/eval.hpp"
#include "model/gguf_file.hpp"
#include "model/model_sources.hpp"
#include "model/tokenizer_id.hpp"
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

TokenText read_eval_text(const EvalOptions& o) {
  if (!o.text_is_plain) return read_token_file(o.text_path);
  if (!gguf::has_gguf_magic(o.model_path))
    throw InputError("--text-file " + o.text_path + ": tokenizing needs the model's vocabulary, which only a GGUF holds; " +
                     o.model_path + " is not a GGUF: give the GGUF to --model, or a token file to --text");
  return tokenize_with_gguf(o.model_path, read_text_file(o.text_path));
}

}  // namespace dgq::sim

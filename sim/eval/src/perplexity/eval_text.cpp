// The tokens a `dgq eval` run scores: a token file (--text), or a text file (--text-file)
// tokenized with the --model GGUF's own tokenizer.
#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "dgq/sim/model/tokens.hpp"

namespace dgq::sim {

TokenText read_eval_text(const EvalOptions& o) {
  if (!o.text_is_plain) return read_token_file(o.text_path);
  if (!gguf::has_gguf_magic(o.model_path))
    throw InputError("--text-file " + o.text_path +
                     ": tokenizing needs the model's vocabulary, which only a GGUF holds; " + o.model_path +
                     " is not a GGUF: give the GGUF to --model, or a token file to --text");
  return tokenize_with_gguf(o.model_path, read_text_file(o.text_path));
}

}  // namespace dgq::sim

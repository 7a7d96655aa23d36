#pragma once
// The identity of a GGUF's tokenizer, so that a token file made with it is accepted by any model
// that tokenizes the same way, whatever either is named (docs/eval.md, "Token files"):
// "fnv1a64:" and 16 hex digits of FNV-1a 64 over tokenizer.ggml.model, tokenizer.ggml.pre,
// every string of tokenizer.ggml.tokens and of tokenizer.ggml.merges (absent keys: nothing), each
// string as its byte length (uint64, little-endian) then its bytes. tools/tokenizer_id.py computes
// the same for the token files it writes and the model files it exports.
#include <string>

#include "dgq/sim/model/gguf_file.hpp"
#include "dgq/sim/model/model.hpp"

namespace dgq::sim {

std::string tokenizer_id(const gguf::File& f);

// Whether tokens made by the tokenizer named `name` (with identity `id`, empty when the file
// records none) fit model `c`: by identity when both have one, else by name. Empty when they
// fit, else the end of an error message: "the tokenizer of 'X', the model is 'Y'".
std::string tokenizer_mismatch(const std::string& name, const std::string& id, const ModelConfig& c);

}  // namespace dgq::sim

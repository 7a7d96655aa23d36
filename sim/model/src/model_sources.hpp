#pragma once
// The two places a model comes from (docs/model-format.md): a dgq model file (HDF5, written by
// tools/export-model.py) and a GGUF file read directly. load_model() and read_model_config()
// choose by the file's magic; both give the same ModelConfig checks.
#include <string>

#include "dgq/sim/model/model.hpp"

namespace dgq::sim {

// The checks every model's settings pass, whatever file they came from (head counts that divide,
// an even head_dim, BOS inside the vocabulary, ...). Throws InputError naming `path`.
void check_model_config(const ModelConfig& c, const std::string& path);

namespace gguf {
class File;
}

Model load_gguf_model(const std::string& path);
ModelConfig read_gguf_model_config(const std::string& path);
// The name a model read from this GGUF gets: general.name, else the file's name without its
// extension (token files made with its tokenizer carry the same name).
std::string gguf_model_name(const gguf::File& f);
// The model of an open GGUF (load_gguf_model's work; the fuzz target's way in).
Model model_from_gguf(const gguf::File& f);

}  // namespace dgq::sim

#pragma once
// What `dgq memory` is asked about: context lengths as people write them ("8k", "128K") and a
// model's attention shape read from its Hugging Face config.json or its GGUF, so that any model can be sized
// without a table entry (the named shapes stay in model_shapes.hpp).
#include <cstdint>
#include <string>

namespace dgq::sim {

// "8192", "8k"/"8K" (x 1024), "1m"/"1M" (x 1048576). Throws ParameterError naming the text for
// anything else (empty, negative, a fraction, another suffix, or more than 2^40 tokens).
std::int64_t parse_token_count(const std::string& text);

struct ConfigShape {
  int layers = 0, kv_heads = 0, head_dim = 0;
  std::string name;  // model_type and the file, for the table's title
};

// From a Hugging Face config.json: num_hidden_layers; num_key_value_heads (num_attention_heads
// when absent, as transformers reads it); head_dim (hidden_size / num_attention_heads when
// absent). A GGUF (by its magic) goes to read_gguf_shape. Throws InputError naming the file and
// the key that is missing, not a positive integer, or inconsistent.
ConfigShape read_config_shape(const std::string& path);
// From a GGUF's metadata, any architecture: {arch}.block_count, .attention.head_count,
// .attention.head_count_kv (head_count when absent), .attention.key_length (embedding_length /
// head_count when absent); named by general.name.
ConfigShape read_gguf_shape(const std::string& path);

}  // namespace dgq::sim

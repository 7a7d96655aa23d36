#pragma once
// What `dgq memory` is asked about: context lengths as people write them ("8k", "128K") and a
// model's attention shape read from its Hugging Face config.json or its GGUF, so that any model can be sized
// without a table entry (the named shapes stay in model_shapes.hpp).
#include <cstdint>
#include <string>

namespace dgq::sim {

// "8192", "8k"/"8K" (x 1024), "1m"/"1M" (x 1048576). Throws ParameterError naming the text for
// anything else (empty, negative, a fraction, another suffix, or more than 2^40 tokens), and 0
// ("must be >= 1, got 0": a cache of no tokens has no ratio to report); the caller names the
// option (`dgq memory --tokens` checks each value when its command line is read).
std::int64_t parse_token_count(const std::string& text);

// The most layers, KV heads or channels per head `dgq memory` takes from the command line or a
// config (no model comes near; it keeps a cache's byte count far inside 64 bits).
inline constexpr int kMaxShapeValue = 1 << 20;

// Why a cache of `spec` cannot have heads of head_dim channels, or "" when it can: the scheme's
// own refusal (its compress of a head with no tokens: "turboquant: head_dim (channels) must be a
// power of two in [16, 512] ..., got 100"), else its deployment's (SchemeFamily::deployed_block:
// "q8_0: llama.cpp stores it in blocks of 32 channels and refuses a head_dim they do not divide,
// got 100 ..."). A K/V pair answers for each side. ParameterError for a spec make_scheme refuses.
std::string head_dim_refusal(const std::string& spec, int head_dim);

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

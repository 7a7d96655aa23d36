#pragma once
// A decoder-only language model for `dgq eval`, in fp32: the llama family (SmolLM2), Qwen 2
// and 3, and Gemma 3. Its settings and weights come from a dgq model file (docs/model-format.md,
// written by tools/export-model.py) or a GGUF read directly; forward.hpp runs it.
#include <cstdint>
#include <string>
#include <vector>

namespace dgq::sim {

struct ModelConfig {
  std::string name, architecture, activation;  // architecture: "llama" | "gemma3" | "qwen2" | "qwen3"
  std::int64_t num_layers = 0, hidden = 0, ffn = 0, num_q_heads = 0, num_kv_heads = 0, head_dim = 0, vocab_size = 0,
               context_length = 0, bos_token_id = 0;
  bool add_bos = false;
  double rope_theta = 0, rope_theta_local = 0, rms_eps = 0, embedding_scale = 1;
  // Gemma 3: layers with (layer % sliding_window_pattern) != pattern-1 see only the last
  // sliding_window positions and use rope_theta_local. 0 = every layer global.
  std::int64_t sliding_window = 0, sliding_window_pattern = 0;
  bool qk_norm = false, post_norms = false;
  bool attn_bias = false;   // Q, K and V projections add a bias (Qwen2)
  bool tied_output = true;  // logits from token_embd; false: from the tensor `output` (untied)
  // The tokenizer's identity (model/tokenizer_id.hpp) when the model came from a GGUF or from a
  // model file exported with it; empty when unknown. Token files are matched by it when both
  // sides have one, else by the model's name.
  std::string tokenizer_id;

  bool is_local_layer(std::int64_t layer) const;
  std::int64_t q_rows() const { return num_q_heads * head_dim; }
  std::int64_t kv_rows() const { return num_kv_heads * head_dim; }
};

// A row-major fp32 matrix [rows][cols] (a vector when rows == 1).
struct Weight {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;
};

struct LayerWeights {
  Weight attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down;
  Weight attn_q_norm, attn_k_norm;               // qk_norm (gemma3, qwen3)
  Weight post_attention_norm, post_ffw_norm;     // post_norms (gemma3)
  Weight attn_q_bias, attn_k_bias, attn_v_bias;  // attn_bias (qwen2)
};

struct Model {
  ModelConfig config;
  Weight token_embd, output_norm;
  Weight output;  // [vocab][hidden] when !config.tied_output, else empty
  std::vector<LayerWeights> layers;
};

// Reads and validates a model: a dgq model file, or a GGUF read directly (chosen by the file's
// magic; docs/model-format.md, "Your own model"). Throws dgq::InputError naming the file and the tensor or
// attribute at fault (missing, wrong shape, unknown architecture, truncated).
Model load_model(const std::string& path);
// The attributes only (no weights read), checked as load_model checks them.
ModelConfig read_model_config(const std::string& path);
inline constexpr std::int64_t kModelFormatVersion = 1;

}  // namespace dgq::sim

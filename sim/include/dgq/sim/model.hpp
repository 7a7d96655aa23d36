#pragma once
// A decoder-only language model run in fp32 on the CPU (Eigen + OpenMP), for `dgq eval`:
// the llama family (SmolLM2) and Gemma 3. Weights come from a dgq model file
// (docs/model-format.md, written by tools/export_model.py); the KV cache of every layer passes
// through a KvCacheHook, which is where a compression scheme is applied.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace dgq::sim {

struct ModelConfig {
  std::string name, architecture, activation;  // architecture: "llama" | "gemma3" | "qwen2" | "qwen3"
  std::int64_t num_layers = 0, hidden = 0, ffn = 0, num_q_heads = 0, num_kv_heads = 0,
               head_dim = 0, vocab_size = 0, context_length = 0, bos_token_id = 0;
  bool add_bos = false;
  double rope_theta = 0, rope_theta_local = 0, rms_eps = 0, embedding_scale = 1;
  // Gemma 3: layers with (layer % sliding_window_pattern) != pattern-1 see only the last
  // sliding_window positions and use rope_theta_local. 0 = every layer global.
  std::int64_t sliding_window = 0, sliding_window_pattern = 0;
  bool qk_norm = false, post_norms = false;
  bool attn_bias = false;    // Q, K and V projections add a bias (Qwen2)
  bool tied_output = true;   // logits from token_embd; false: from the tensor `output` (untied)
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

// How the forward pass computes (docs/eval.md, "The causal cache"): `blocked` is the fast one
// (Eigen's blocked matrix products, whose summation order depends on how many rows a product
// has); `row_exact` computes every output row with one fixed-order dot product, whatever the
// number of rows beside it, so a token's logits do not depend on how the tokens were batched.
// It exists to prove that the token-by-token decoder and the one-pass causal evaluation compute
// the same thing, bit for bit; it is several times slower.
enum class Arithmetic : std::uint8_t { blocked, row_exact };

// A causal cache as attention reads it at prefill cost (docs/eval.md): for KV head g and a query
// at position i (appended at time i), keys j < final_k[g*tokens + i] read the stored K that
// store() left in place, keys final_k[..] <= j <= i read raw_k; likewise V. raw_* are
// [num_kv_heads][tokens][head_dim] like store()'s K/V.
struct CausalKv {
  std::vector<float> raw_k, raw_v;
  std::vector<std::uint32_t> final_k, final_v;
};

// Where a cache takes the keys (docs/eval.md, "Pre-RoPE keys"): after RoPE (llama.cpp, vLLM and
// every serving engine cache the rotated keys) or before it (KVQuant): the cache stores the
// projected keys and attention reads them rotated after dequantization, each at its position.
enum class KeyPosition : std::uint8_t { post_rope, pre_rope };
// The runner's RoPE of one layer's keys, head-major [heads][tokens][head_dim] in place, row p at
// position first_position + p: what a pre-RoPE cache applies to what it gives back.
using RopeKeys = std::function<void(float* keys, std::int64_t heads, std::int64_t tokens, std::int64_t first_position)>;

// Receives one layer's K and V for the whole chunk, [num_kv_heads][tokens][head_dim] fp32 each,
// and replaces them in place with what the cache gives back, the keys rotated: K arrives after
// RoPE, or (key_position() pre_rope) before it, and the cache then rotates what it gives back
// (and its causal view's raw keys) with rope_keys. It then sees the layer's queries
// [num_q_heads][tokens][head_dim] (after RoPE, before the 1/sqrt(d) scale) and may round them
// before they meet the cached keys.
class KvCacheHook {
 public:
  virtual ~KvCacheHook() = default;
  virtual KeyPosition key_position() const { return KeyPosition::post_rope; }
  virtual void store(std::int64_t layer, std::int64_t tokens, std::vector<float>& k, std::vector<float>& v,
                     const RopeKeys& rope_keys) = 0;
  virtual void queries(std::int64_t /*layer*/, std::int64_t /*tokens*/, std::vector<float>& /*q*/) {}
  // After store(): the causal view of this layer, or nullptr when every query reads store()'s
  // K/V (a prefill cache).
  virtual const CausalKv* causal_kv(std::int64_t /*layer*/) const { return nullptr; }
};

// Runs tokens (positions 0..n-1, one causal prefill) and returns the logits of rows
// first_row..n-1, row-major [n - first_row][vocab_size] (forward_hidden, then row_logits).
std::vector<float> forward_logits(const Model& model, std::span<const std::int32_t> tokens,
                                  KvCacheHook& cache, std::int64_t first_row,
                                  Arithmetic arithmetic = Arithmetic::blocked);
// The same pass up to the final hidden rows first_row..n-1, [n - first_row][hidden], so that a
// caller can turn them into logits a block at a time (a 262144-token vocabulary makes the
// logits of 8K rows 8.6 GB).
std::vector<float> forward_hidden(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic = Arithmetic::blocked);
// Logits [rows][vocab_size] of final hidden rows, computed kLogitRowBlock rows at a time (the
// blocks start at row 0 of `hidden`, so a row's logits do not depend on how many rows follow).
inline constexpr std::int64_t kLogitRowBlock = 256;
void row_logits(const Model& model, const float* hidden, std::int64_t rows, Arithmetic arithmetic, float* out);

// The cache of a decoder that writes tokens as they come (one micro-batch at a time): append()
// gets a micro-batch's K/V of one layer, [num_kv_heads][m][head_dim] fp32; read() gives every
// token's K/V as the cache holds them now, [num_kv_heads][tokens so far][head_dim], the keys
// rotated (a pre-RoPE cache gets them unrotated and rotates what it reads with rope_keys, as
// KvCacheHook). queries() as KvCacheHook's, for the micro-batch's queries.
class DecoderCache {
 public:
  virtual ~DecoderCache() = default;
  virtual KeyPosition key_position() const { return KeyPosition::post_rope; }
  virtual void append(std::int64_t layer, std::int64_t tokens, const std::vector<float>& k,
                      const std::vector<float>& v) = 0;
  virtual void read(std::int64_t layer, std::vector<float>& k, std::vector<float>& v, const RopeKeys& rope_keys) = 0;
  virtual void queries(std::int64_t /*layer*/, std::int64_t /*tokens*/, std::vector<float>& /*q*/) {}
};

// The literal decoder: tokens in micro-batches of `ubatch` (llama.cpp's semantics: a micro-batch
// is written into the cache, then its queries attend to the cache including itself, causally
// masked); ubatch 1 is token by token. Returns the logits of rows first_row..n-1 as forward_logits.
std::vector<float> decode_logits(const Model& model, std::span<const std::int32_t> tokens, DecoderCache& cache,
                                 std::int64_t first_row, std::int64_t ubatch,
                                 Arithmetic arithmetic = Arithmetic::blocked);

}  // namespace dgq::sim

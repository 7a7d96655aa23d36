#pragma once
// The forward pass of a model (model.hpp), in fp32 on the CPU (Eigen + OpenMP): a chunk of
// tokens in one causal pass, the KV cache of every layer passing through a KvCacheHook, which
// is where a compression scheme is applied (dgq/sim/eval/scheme_cache.hpp). decoder.hpp runs
// the same layers token by token.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dgq/sim/model/model.hpp"

namespace dgq::sim {

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
std::vector<float> forward_logits(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic = Arithmetic::blocked);
// The same pass up to the final hidden rows first_row..n-1, [n - first_row][hidden], so that a
// caller can turn them into logits a block at a time (a 262144-token vocabulary makes the
// logits of 8K rows 8.6 GB).
std::vector<float> forward_hidden(const Model& model, std::span<const std::int32_t> tokens, KvCacheHook& cache,
                                  std::int64_t first_row, Arithmetic arithmetic = Arithmetic::blocked);
// Logits [rows][vocab_size] of final hidden rows, computed kLogitRowBlock rows at a time (the
// blocks start at row 0 of `hidden`, so a row's logits do not depend on how many rows follow).
inline constexpr std::int64_t kLogitRowBlock = 256;
void row_logits(const Model& model, const float* hidden, std::int64_t rows, Arithmetic arithmetic, float* out);

}  // namespace dgq::sim

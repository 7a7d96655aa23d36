#pragma once
// The KV cache of a `dgq eval` run (docs/eval.md, "The causal cache"): every layer's K and V
// through its scheme, in prefill or causal mode, with its held bytes and attention KL probes.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/model/decoder.hpp"
#include "dgq/sim/model/forward.hpp"

namespace dgq::sim {

// One cache of a run: a KvCacheHook for the one-pass evaluation (prefill, or causal at prefill
// cost through its causal view) and a DecoderCache for the literal micro-batched decoder.
class SchemeCache final : public KvCacheHook, public DecoderCache {
 public:
  SchemeCache(const std::string& spec, QueryRounding rounding, CacheMode mode = CacheMode::prefill,
              KeyPosition keys = KeyPosition::post_rope, DType raw_dtype = DType::f16);
  // A caller-owned scheme for both roles (tests: a scheme that returns its input unchanged).
  SchemeCache(const Scheme* scheme, bool stores_fp16, QueryRounding rounding, CacheMode mode = CacheMode::prefill,
              KeyPosition keys = KeyPosition::post_rope, DType raw_dtype = DType::f16);
  // Whether some layer and role of a cache spec keeps rows raw (Scheme::keeps_raw_rows), i.e.
  // whether the raw dtype changes anything for it.
  static bool keeps_raw_rows(const std::string& spec);
  ~SchemeCache() override;
  // KvCacheHook and DecoderCache
  KeyPosition key_position() const override { return keys_; }
  // KvCacheHook
  void store(std::int64_t layer, std::int64_t tokens, std::vector<float>& k, std::vector<float>& v,
             const RopeKeys& rope_keys) override;
  void queries(std::int64_t layer, std::int64_t tokens, std::vector<float>& q) override;
  const CausalKv* causal_kv(std::int64_t layer) const override;
  // DecoderCache (causal mode only; no attention probes)
  void append(std::int64_t layer, std::int64_t tokens, const std::vector<float>& k,
              const std::vector<float>& v) override;
  void read(std::int64_t layer, std::vector<float>& k, std::vector<float>& v, const RopeKeys& rope_keys) override;

  CacheMode mode() const { return mode_; }
  // Causal mode: asks the scheme for its causal rule on a one-token tensor of config->head_dim
  // channels, so that a scheme with none (fp8-e4m3's per-tensor scale) fails before any work;
  // and a layer plan's layers must exist in the model (ParameterError naming the layer).
  void check_causal_rule() const;
  // Bytes and elements the cache holds after the last token (the final state, raw tail
  // included), and their sums over every time a token was appended (decoder: every append), so
  // that 8 * held_bytes_sum / held_elements_sum is the bits per element held on average while
  // decoding. A prefill cache is written once: its sums are its final counts.
  std::uint64_t stored_bytes() const { return bytes_; }
  std::uint64_t stored_elements() const { return elements_; }
  std::uint64_t held_bytes_sum() const { return held_bytes_sum_; }
  std::uint64_t held_elements_sum() const { return held_elements_sum_; }
  // stored_bytes() of one role (the K cache's and the V cache's bytes apart).
  std::uint64_t stored_bytes(TensorRole role) const { return role_bytes_[role_index(role)]; }
  // 0 for keys, 1 for values: the index of a role in the per-role arrays.
  static int role_index(TensorRole role) { return role == TensorRole::key ? 0 : 1; }
  // Attention KL per layer (docs/eval.md): sum over probe queries and query heads of
  // KL(attention with the exact K/V || with the cache's), and the number of terms.
  const std::vector<double>& attention_kl_sums() const { return kl_sums_; }
  const std::vector<std::int64_t>& attention_kl_counts() const { return kl_counts_; }
  // Also forgets the decoder's state: the next append starts a new chunk.
  void reset_counters();
  // Set by the runner before the first store: the model's shape, the first position whose
  // query is probed, and the distance between probes (attention_probe_stride).
  const ModelConfig* config = nullptr;
  std::int64_t first_probe = 0;
  std::int64_t probe_stride = kAttentionProbeStride;
  static constexpr std::int64_t kAttentionProbeStride = 16;
  static constexpr std::int64_t kMaxAttentionProbes = 32;
  // Every 16th scored row, and at most 32 probes per head and layer: n_ctx <= 1024 keeps the
  // stride of 16 (every published figure), longer chunks spread 32 probes over their scored rows,
  // so that the probes (fp64, each against every visible key) cost O(n_ctx), not O(n_ctx^2).
  static std::int64_t attention_probe_stride(std::int64_t scored_rows) {
    return std::max(kAttentionProbeStride, (scored_rows + kMaxAttentionProbes - 1) / kMaxAttentionProbes);
  }

 private:
  void pass_through(std::vector<float>& x, std::int64_t layer, std::int64_t tokens, TensorRole role);
  void pass_causally(std::vector<float>& x, std::int64_t layer, std::int64_t tokens, TensorRole role,
                     std::vector<float>& raw, std::vector<std::uint32_t>& final_tokens);
  // The scheme of one role: nullptr for the exact fp32 cache; stores_fp16 for a family that
  // stores its input's bytes (its input is then the K/V rounded to fp16). input_dtype is what
  // the role's cache is handed; cache_row_dtype (dgq/causal.hpp) turns it into the raw dtype
  // when the scheme keeps rows of the role raw.
  struct Side {
    std::unique_ptr<Scheme> owned;
    const Scheme* scheme = nullptr;
    bool stores_fp16 = false;
    DType input_dtype() const { return stores_fp16 ? DType::f16 : DType::f32; }
  };
  // The K and V sides of one cache spec (a scheme, a pair or fp32); a layer plan has one per spec.
  struct Sides {
    Side role[2];  // key, value
    bool exact() const { return role[0].scheme == nullptr && role[1].scheme == nullptr; }
  };
  static Sides make_sides(const std::string& spec);
  const Sides& sides(std::int64_t layer) const {
    const auto l = static_cast<std::size_t>(layer);
    return plan_[l < layer_sides_.size() ? layer_sides_[l] : 0];
  }
  const Side& side(std::int64_t layer, TensorRole role) const { return sides(layer).role[role_index(role)]; }
  // No layer has a scheme: the cache gives back what it gets, and keeps no causal view. A plan
  // with any scheme passes even its exact layers causally, so that they count their held bytes
  // at every append as the others do.
  bool exact() const {
    return std::all_of(plan_.begin(), plan_.end(), [](const Sides& s) { return s.exact(); });
  }
  void count_bytes(TensorRole role, std::uint64_t bytes) {
    bytes_ += bytes;
    role_bytes_[role_index(role)] += bytes;
  }
  void probe_attention(std::int64_t layer, std::int64_t tokens, const std::vector<float>& q);
  void reset_decoder();
  std::vector<float> exact_k_, cached_k_;  // this layer's keys, for the probes
  std::vector<double> kl_sums_;
  std::vector<std::int64_t> kl_counts_;
  // plan_[0] is the default spec's sides, then one per override spec; layer_sides_[l] indexes
  // plan_ for layer l (layers past its end take the default), so its last entry is the highest
  // planned layer.
  std::vector<Sides> plan_;
  std::vector<std::size_t> layer_sides_;
  QueryRounding rounding_ = QueryRounding::off;
  CacheMode mode_ = CacheMode::prefill;
  KeyPosition keys_ = KeyPosition::post_rope;
  DType raw_dtype_ = DType::f16;
  std::unique_ptr<Scheme> q8_0_;
  CausalKv causal_;  // the last stored layer's view (causal mode)
  struct Decoder;    // the literal caches, [layer][kv head][role]
  std::unique_ptr<Decoder> decoder_;
  std::uint64_t bytes_ = 0, elements_ = 0, held_bytes_sum_ = 0, held_elements_sum_ = 0;
  std::uint64_t role_bytes_[2] = {0, 0};
};

}  // namespace dgq::sim

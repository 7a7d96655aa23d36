#pragma once
// `dgq eval`: a language model run with its KV cache passed through each scheme, scored like
// llama.cpp's perplexity tool (docs/eval.md): chunks of n_ctx tokens, BOS in front when the
// model wants one, the second half of each chunk scored; KL divergence against a base cache.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/sim/model.hpp"
#include "dgq/sim/progress.hpp"

namespace dgq::sim {

// ---- Token files (docs/eval.md) -----------------------------------------------------------
struct TokenText {
  std::string model, kind;  // the tokenizer's model name; the prompt kind ("code", ...)
  std::string tokenizer_id; // the tokenizer's identity (attribute tokenizer_id), empty in older files
  double noise_rate = 0;
  std::vector<std::int32_t> tokens;
};
// Throws InputError naming the file and dataset/attribute at fault.
TokenText read_token_file(const std::string& path);
// Writes a token file (through PATH.partial) with the text the tokens spell as /text.
void write_token_file(const std::string& path, const TokenText& tokens, const std::string& text);

// The runs of an eval or passkey results file (dgq-eval, dgq-passkey-results): the model and each
// run's name and cache spec, in the order they were run (for dgq inspect).
struct EvalRunListing {
  std::string model;
  std::vector<std::string> names, specs;
};
EvalRunListing list_eval_runs(const std::string& path);
struct EvalOptions;
// The tokens of a run: its token file, or (text_is_plain) its text file tokenized with the GGUF
// model's tokenizer (sim/src/tokenizer; kind "text"). InputError naming the file when the model
// is not a GGUF, the text is empty or not readable, or the tokenizer is not one dgq implements.
TokenText read_eval_text(const EvalOptions& o);
// `text` (UTF-8) tokenized with the tokenizer of the GGUF at `gguf_path`, as a token text of kind
// "text" carrying the model's name and tokenizer identity.
TokenText tokenize_with_gguf(const std::string& gguf_path, const std::string& text);
// The whole file at `path`, checked as UTF-8 (InputError when it cannot be read, is empty or is
// not UTF-8, naming the first bad byte).
std::string read_text_file(const std::string& path);
inline constexpr std::int64_t kTokenFormatVersion = 1;

// ---- The cache -----------------------------------------------------------------------------
// "fp32" (or llama.cpp's "f32") is the exact cache (no scheme); every other name is a
// make_scheme spec, a K/V pair "K_SPEC/V_SPEC" included (dgq/kv_pair.hpp; either side may be
// fp32). The fp16 family stores fp16: its input is the fp32 K/V rounded to nearest-even
// (llama.cpp's f32 -> f16 copy); a role whose scheme keeps rows raw gets them in the raw dtype
// (parse_raw_dtype below); every other scheme gets the fp32 K/V as computed.
// A layer plan "DEFAULT;LAYERS=SPEC;..." gives some layers their own cache spec (docs/eval.md,
// "Layer plans"; sim/src/model/layer_plan.hpp).
// The canonical text of a cache spec: "fp32" for the exact cache (f32 too), a scheme's
// canonical spec, a K/V pair of those (a pair of one scheme is that scheme), a layer plan of
// those, so that "dgq" and "dgq:win=16,..." are one configuration in a run's identity.
std::string canonical_cache_spec(const std::string& spec);
enum class QueryRounding { off, q8_0 };
QueryRounding parse_query_rounding(const std::string& name);  // "off" | "q8_0"

// How the cache is written (docs/eval.md, "The causal cache"): `prefill` hands every scheme the
// whole chunk at once (what dgq measured before 2026-12; schemes may look ahead); `causal`
// writes it as a decoder does, token by token, each family by its causal rule (docs/spec.md,
// "Causal caches"): a query reads every earlier token as the cache held it when the query's
// token was appended.
enum class CacheMode { prefill, causal };
CacheMode parse_cache_mode(const std::string& name);  // "prefill" | "causal"
std::string cache_mode_name(CacheMode mode);
KeyPosition parse_key_position(const std::string& name);  // "post-rope" | "pre-rope"
std::string key_position_name(KeyPosition keys);

// The dtype in which a cache holds the rows it keeps raw (docs/spec.md rule C9, docs/eval.md
// "Raw rows"): fp16 by default, as llama.cpp, vLLM, SGLang and transformers hold them; bf16; or
// fp32, the runner's own dtype (every figure before 2026-12-07). It applies to the roles whose
// scheme keeps rows raw (a causal raw tail: KIVI, DGQ v1/v2's open segment or group, KVarN's
// open tile, a prefix scale; rows stored as they came: sink=N, KVarN's sink block, a residual),
// in both cache modes; the per-token formats get the K/V as computed, in fp32.
DType parse_raw_dtype(const std::string& name);  // "fp16" | "bf16" | "fp32" (or f16, f32): ParameterError
// What a run records: the raw dtype's name ("f16", "bf16", "f32") when some layer and role of the
// cache spec keeps rows raw, "none" when none does (the option changes nothing there).
std::string raw_dtype_label(const std::string& spec, DType raw_dtype);

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
  void append(std::int64_t layer, std::int64_t tokens, const std::vector<float>& k, const std::vector<float>& v) override;
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

// ---- Scores --------------------------------------------------------------------------------
// Per scored token: what the run predicted for the next token, and how far from the base.
struct TokenScores {
  std::vector<double> nll;       // -log p(target)
  std::vector<double> kld;       // KL(base || this) of the next-token distribution
  std::vector<double> p_target;  // p(target)
  std::vector<std::uint8_t> same_top1;  // argmax equal to the base's argmax
  void append(const TokenScores& other);
  std::size_t size() const { return nll.size(); }
};
// logits and base_logits [rows][vocab]; targets[r] is the token predicted by row r.
TokenScores score_tokens(std::span<const float> base_logits, std::span<const float> logits,
                         std::span<const std::int32_t> targets, std::int64_t vocab);

struct EvalSummary {
  double ppl = 0, ppl_stderr = 0, dppl = 0, dppl_stderr = 0;
  double kld_mean = 0, kld_stderr = 0, kld_median = 0, kld_p90 = 0, kld_p99 = 0, kld_max = 0;
  double rms_dp = 0, same_top1 = 0, bits_per_element = 0;
  // Bits per element held on average while decoding (sum over appends of the bytes held / of
  // the elements held); equals bits_per_element for a prefill cache.
  double bits_averaged = 0;
  // bits_per_element of the K cache and of the V cache apart (a K/V pair's two sides); NaN
  // when chunks written by a dgq before 2026-12-03 did not record the K bytes.
  double bits_k = 0, bits_v = 0;
  // Mean attention KL of probe queries, exact vs cached K/V, over layers, heads and probes
  // (the base run's comes from the base logits file when that is reused).
  double attn_kl_mean = 0;
  std::vector<double> attn_kl_per_layer;
  std::int64_t tokens = 0;
};
// Statistics as llama.cpp's KL-divergence report (docs/eval.md gives the formulas).
struct HeldBytes {
  std::uint64_t bytes = 0, elements = 0;  // the final state
  std::uint64_t bytes_sum = 0, elements_sum = 0;  // summed over appends
  std::int64_t k_bytes = -1;  // the K cache's part of bytes; -1: not recorded
};
EvalSummary summarize(const TokenScores& run, const TokenScores& base, const HeldBytes& held);
// Linear interpolation between order statistics (numpy.percentile's default); fraction in [0, 1].
double percentile(std::vector<double> values, double fraction);

// ---- The run -------------------------------------------------------------------------------
struct EvalOptions {
  std::string model_path, text_path, output_path, json_path, base_logits_path;
  // text_path is plain UTF-8 text, tokenized with the model's GGUF tokenizer (--text-file), not a
  // token file.
  bool text_is_plain = false;
  std::int64_t ctx = 0;
  std::int64_t max_chunks = 0;  // 0 = every whole chunk of the text
  std::string base = "fp16";
  std::vector<std::string> schemes;
  QueryRounding query_rounding = QueryRounding::off;
  CacheMode cache = CacheMode::prefill;
  KeyPosition keys = KeyPosition::post_rope;  // --keys: every cache of the run, the base's too
  DType raw_dtype = DType::f16;  // --raw-dtype: every cache of the run (parse_raw_dtype)
  // Causal cache only: 0 evaluates it in one pass at prefill cost (each query reads the cache as
  // it was when its token was appended, i.e. token-by-token decoding); N >= 1 runs the literal
  // decoder in micro-batches of N tokens (llama.cpp's n_ubatch semantics; 1 = token by token).
  std::int64_t ubatch = 0;
  Arithmetic arithmetic = Arithmetic::blocked;  // row_exact: to prove ubatch 1 == one pass
  bool save_logits = false;  // every scheme's scored logits into the results file (small runs)
  // Reuse chunks and base logits written by another dgq build (refused otherwise); the result
  // is then labelled with every contributing version (EvalResult::dgq_version).
  bool allow_mixed_versions = false;
  // Replace an existing output file; without it an existing -o is refused before any work
  // (its runs would be lost: docs/cli.md, "Outputs").
  bool force = false;
  ProgressMode progress = ProgressMode::off;  // a unit: one chunk through one cache
  // Test hook: called after each finished chunk (index); throwing from it simulates a kill.
  std::function<void(std::int64_t)> after_chunk;
};

struct EvalSchemeResult {
  std::string spec;
  EvalSummary summary;
  std::string config_hash;  // config_hash(eval_run_config_text(options, spec))
  std::string raw_dtype;    // raw_dtype_label(spec, options.raw_dtype)
};
struct EvalResult {
  std::string model;
  CacheMode cache = CacheMode::prefill;
  KeyPosition keys = KeyPosition::post_rope;
  DType raw_dtype = DType::f16;
  std::string text_kind;  // the token file's kind and noise rate
  double noise_rate = 0;
  std::int64_t chunks = 0, scored_per_chunk = 0;
  double tokens_per_second = 0;  // forward-pass throughput over the chunks computed in this call
  std::vector<EvalSchemeResult> schemes;  // the base first
  // This build's version string; with allow_mixed_versions and reused chunks or base logits of
  // other builds, every contributing version joined by '+', this build's first.
  std::string dgq_version;
  std::string config_hash;  // of the whole run (eval_run_identity with the schemes)
};

// The canonical configuration of one scheme's eval run, whose config_hash each run records
// (docs/results-format.md, "Provenance"): "eval", the model's name, the text's token count and
// FNV-1a hash, ctx, the number of chunks, the canonical base and query rounding, the scheme's
// canonical spec. Reads the model file's attributes (not its weights) and the token file.
// Paths, threads, --save-logits and --json are not part of it.
std::string eval_run_config_text(const EvalOptions& options, const std::string& spec);

// Chunk layout (llama.cpp perplexity): chunk c covers tokens [c*ctx, (c+1)*ctx); with BOS its
// first token is replaced by BOS; rows first..ctx-2 are scored, first = ctx/2.
std::int64_t first_scored_row(std::int64_t ctx);
// The shortest chunk scored (rows ctx/2 .. ctx-2: at least one); the model's context length
// bounds it above.
inline constexpr std::int64_t kMinEvalCtx = 4;
EvalResult run_eval(const EvalOptions& options);
// Console table of a result.
std::string format_eval_table(const EvalResult& result);

}  // namespace dgq::sim

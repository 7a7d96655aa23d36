#pragma once
// `dgq eval`: a language model run with its KV cache passed through each scheme, scored like
// llama.cpp's perplexity tool (docs/eval.md): chunks of n_ctx tokens, BOS in front when the
// model wants one, the second half of each chunk scored; KL divergence against a base cache.
// The cache (scheme_cache.hpp) and the scores (scores.hpp) are headers of their own.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/eval/scores.hpp"
#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/model/forward.hpp"
#include "dgq/sim/model/gemm_library.hpp"
#include "dgq/sim/model/tokens.hpp"

namespace dgq::sim {

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
  DType raw_dtype = DType::f16;               // --raw-dtype: every cache of the run (parse_raw_dtype)
  // Causal cache only: 0 evaluates it in one pass at prefill cost (each query reads the cache as
  // it was when its token was appended, i.e. token-by-token decoding); N >= 1 runs the literal
  // decoder in micro-batches of N tokens (llama.cpp's n_ubatch semantics; 1 = token by token).
  std::int64_t ubatch = 0;
  Arithmetic arithmetic = Arithmetic::blocked;  // row_exact: to prove ubatch 1 == one pass
  // The blocked arithmetic's matrix products (gemm_library.hpp); run_eval sets it for the process.
  GemmLibrary gemm_library = default_gemm_library();
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

// The tokens of a run: its token file, or (text_is_plain) its text file tokenized with the GGUF
// model's tokenizer (sim/model/src/tokenizer; kind "text"). InputError naming the file when the model
// is not a GGUF, the text is empty or not readable, or the tokenizer is not one dgq implements.
TokenText read_eval_text(const EvalOptions& o);

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
  double tokens_per_second = 0;           // forward-pass throughput over the chunks computed in this call
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

#include "perplexity/eval_plan.hpp"

#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval_identity.hpp"
#include "dgq/sim/model/tokenizer_id.hpp"

namespace dgq::sim {

namespace {

void check_tokens_fit(const TokenText& text, const ModelConfig& c, const std::string& path) {
  const std::string mismatch = tokenizer_mismatch(text.model, text.tokenizer_id, c);
  if (!mismatch.empty()) throw InputError(path + ": tokens were made with " + mismatch);
  for (std::size_t i = 0; i < text.tokens.size(); ++i)
    if (text.tokens[i] >= c.vocab_size)
      throw InputError(path + ": dataset /tokens: index " + std::to_string(i) + " holds " +
                       std::to_string(text.tokens[i]) + ", outside the vocabulary of " + std::to_string(c.vocab_size));
}

// eval_chunk_count() (the count the run's identity and config hashes record), refused when
// --ctx is outside the model's context or the text holds no whole chunk (the count is 0).
std::int64_t chunks_to_score(const TokenText& text, const EvalOptions& o, const ModelConfig& c) {
  if (o.ctx < kMinEvalCtx || o.ctx > c.context_length)
    throw ParameterError("--ctx " + std::to_string(o.ctx) + ": must be in [" + std::to_string(kMinEvalCtx) + ", " +
                         std::to_string(c.context_length) + "] (the model's context length)");
  // eval_chunk_count reads a negative count as "all": refused, not run in full.
  if (o.max_chunks < 0)
    throw ParameterError("--chunks " + std::to_string(o.max_chunks) + ": must be >= 0 (0 = every whole chunk)");
  const std::int64_t chunks = eval_chunk_count(text, o);
  if (chunks == 0)
    throw InputError(o.text_path + ": " + std::to_string(text.tokens.size()) +
                     " tokens, fewer than one chunk of --ctx " + std::to_string(o.ctx));
  return chunks;
}

}  // namespace

std::int64_t first_scored_row(std::int64_t ctx) { return ctx / 2; }

EvalPlan::EvalPlan(const EvalOptions& o) {
  if (o.output_path.empty()) throw ParameterError("eval: an output file (-o) is required");
  model = load_model(o.model_path);
  const ModelConfig& c = model.config;
  text = read_eval_text(o);
  check_tokens_fit(text, c, o.text_path);
  chunks = chunks_to_score(text, o, c);
  if (o.schemes.empty()) throw ParameterError("--scheme: give at least one scheme");
  if (o.ubatch < 0)
    throw ParameterError("--ubatch " + std::to_string(o.ubatch) + ": must be 0 (one pass) or at least 1");
  if (o.ubatch > 0 && o.cache != CacheMode::causal)
    throw ParameterError("--ubatch " + std::to_string(o.ubatch) + ": the micro-batched decoder needs --cache causal");

  cache_mode = o.cache;
  keys = o.keys;
  raw_dtype = o.raw_dtype;
  specs.push_back(o.base);
  specs.insert(specs.end(), o.schemes.begin(), o.schemes.end());
  for (const auto& spec : specs)
    caches.push_back(
        std::make_unique<SchemeCache>(spec, o.query_rounding, o.cache, o.keys, o.raw_dtype));  // bad specs fail here
  first = first_scored_row(o.ctx);
  rows = o.ctx - 1 - first;
  vocab = c.vocab_size;
  for (auto& cache : caches) {
    cache->config = &c;
    cache->first_probe = first;
    cache->probe_stride = SchemeCache::attention_probe_stride(rows);
    cache->reset_counters();
    cache->check_causal_rule();  // a scheme with no causal form fails here, before any work
  }
  identity = eval_run_identity(c, text, o, chunks, true);
  base_identity = eval_run_identity(c, text, o, chunks, false);
  this_run = this_build(config_hash(identity));
  for (const auto& spec : specs) scheme_hashes.push_back(config_hash(eval_config_text(c, text, o, chunks, spec)));
}

}  // namespace dgq::sim

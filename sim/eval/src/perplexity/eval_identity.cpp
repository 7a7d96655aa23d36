// The identity and configuration texts of eval runs (see eval_identity.hpp).
#include "dgq/sim/eval/eval_identity.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "token_hash.hpp"

namespace dgq::sim {

namespace {

const char* rounding_name(QueryRounding r) { return r == QueryRounding::q8_0 ? "q8_0" : "off"; }

// The cache settings, each written only when not what runs before it existed did, so that
// every older run keeps its identity and config hash: the raw dtype (rule C9) only where a cache
// of `specs` keeps rows raw and it is not fp32, the runner's dtype that held them before.
std::string cache_settings(const EvalOptions& o, const std::vector<std::string>& specs, const char* separator) {
  std::string s;
  if (o.cache == CacheMode::causal) s += std::string(separator) + "cache=causal";
  if (o.keys == KeyPosition::pre_rope) s += std::string(separator) + "keys=pre-rope";
  const bool raw_rows = std::any_of(specs.begin(), specs.end(),
                                    [](const std::string& spec) { return SchemeCache::keeps_raw_rows(spec); });
  if (raw_rows && o.raw_dtype != DType::f32)
    s += std::string(separator) + "raw_dtype=" + std::string(dtype_name(o.raw_dtype));
  if (o.ubatch > 0) s += std::string(separator) + "ubatch=" + std::to_string(o.ubatch);
  if (o.arithmetic == Arithmetic::row_exact) s += std::string(separator) + "arithmetic=row_exact";
  // Eigen's products, the arithmetic of the runs before oneDNN: named so that a run with the one
  // never resumes from chunks of the other (a build without oneDNN names it too).
  if (o.arithmetic == Arithmetic::blocked && o.gemm_library == GemmLibrary::eigen)
    s += std::string(separator) + "gemm=eigen";
  return s;
}

// The cache specs of a run: the base, and the schemes when they are part of the identity.
std::vector<std::string> run_specs(const EvalOptions& o, bool with_schemes) {
  std::vector<std::string> specs{o.base};
  if (with_schemes) specs.insert(specs.end(), o.schemes.begin(), o.schemes.end());
  return specs;
}

}  // namespace

std::string eval_run_identity(const ModelConfig& c, const TokenText& text, const EvalOptions& o, std::int64_t chunks,
                              bool with_schemes) {
  std::ostringstream s;
  s << "model=" << c.name << ";tokens=" << text.tokens.size() << ":" << std::hex << token_sequence_hash(text.tokens)
    << std::dec << ";ctx=" << o.ctx << ";chunks=" << chunks << ";base=" << o.base
    << ";query_rounding=" << rounding_name(o.query_rounding) << cache_settings(o, run_specs(o, with_schemes), ";");
  if (with_schemes) {
    s << ";save_logits=" << o.save_logits << ";schemes=";
    for (const auto& spec : o.schemes) s << spec << "|";
  }
  return s.str();
}

std::string eval_config_text(const ModelConfig& c, const TokenText& text, const EvalOptions& o, std::int64_t chunks,
                             const std::string& spec) {
  std::ostringstream s;
  s << "eval\nmodel=" << c.name << "\ntokens=" << text.tokens.size() << ":" << std::hex
    << token_sequence_hash(text.tokens) << std::dec << "\nctx=" << o.ctx << "\nchunks=" << chunks
    << "\nbase=" << canonical_cache_spec(o.base) << "\nquery_rounding=" << rounding_name(o.query_rounding)
    << cache_settings(o, {spec}, "\n") << "\nscheme=" << canonical_cache_spec(spec) << "\n";
  return s.str();
}

std::int64_t eval_chunk_count(const TokenText& text, const EvalOptions& o) {
  if (o.ctx <= 0) return 0;
  const std::int64_t whole = static_cast<std::int64_t>(text.tokens.size()) / o.ctx;
  return o.max_chunks > 0 ? std::min(whole, o.max_chunks) : whole;
}

std::string eval_run_config_text(const EvalOptions& o, const std::string& spec) {
  const ModelConfig c = read_model_config(o.model_path);
  const TokenText text = read_eval_text(o);
  return eval_config_text(c, text, o, eval_chunk_count(text, o), spec);
}

}  // namespace dgq::sim

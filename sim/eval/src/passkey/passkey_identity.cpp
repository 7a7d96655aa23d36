// The configuration texts of passkey runs (model/passkey_identity.hpp). Unlike eval's, every
// cache setting is always written: the task is newer than the causal cache, so there are no
// older hashes to keep.
#include "passkey/passkey_identity.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "dgq/scheme.hpp"
#include "token_hash.hpp"

namespace dgq::sim {
namespace {

// What decides every number of a run but the scheme: model, task (prompts and answers by count
// and hash), cache settings. The raw dtype (rule C9) only where a cache of `specs` keeps rows
// raw and it is not fp32, what the runs before it held them in: older identities stand.
std::string passkey_settings_text(const ModelConfig& c, const PasskeyTask& t, const PasskeyOptions& o,
                                  const std::vector<std::string>& specs) {
  const bool raw_rows = std::any_of(specs.begin(), specs.end(),
                                    [](const std::string& spec) { return SchemeCache::keeps_raw_rows(spec); });
  std::ostringstream s;
  s << "passkey\nmodel=" << c.name << "\nprompts=" << t.size() << "\ntokens=" << t.tokens.size() << ":" << std::hex
    << token_sequence_hash(t.tokens) << "\nanswers=" << std::dec << t.answer_tokens.size() << ":" << std::hex
    << token_sequence_hash(t.answer_tokens) << std::dec
    << "\nquery_rounding=" << (o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off")
    << "\ncache=" << cache_mode_name(o.cache)
    << (o.keys == KeyPosition::pre_rope ? "\nkeys=pre-rope" : "")  // only when set: older identities stand
    << (raw_rows && o.raw_dtype != DType::f32 ? "\nraw_dtype=" + std::string(dtype_name(o.raw_dtype)) : "")
    << "\nubatch=" << o.ubatch << "\narithmetic=" << (o.arithmetic == Arithmetic::row_exact ? "row_exact" : "blocked")
    << (o.arithmetic == Arithmetic::blocked && o.gemm_library == GemmLibrary::eigen ? "\ngemm=eigen" : "") << "\n";
  return s.str();
}

}  // namespace

std::string passkey_config_text(const ModelConfig& c, const PasskeyTask& t, const PasskeyOptions& o,
                                const std::string& spec) {
  return passkey_settings_text(c, t, o, {spec}) + "scheme=" + canonical_cache_spec(spec) + "\n";
}

std::string passkey_run_config_text(const ModelConfig& c, const PasskeyTask& t, const PasskeyOptions& o) {
  std::string s = passkey_settings_text(c, t, o, o.schemes);
  for (const auto& spec : o.schemes) s += "scheme=" + canonical_cache_spec(spec) + "\n";
  return s;
}

}  // namespace dgq::sim

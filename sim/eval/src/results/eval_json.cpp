#include "results/eval_json.hpp"

#include <nlohmann/json.hpp>

#include "dgq/sim/files/output/text_output.hpp"

namespace dgq::sim {

namespace {

// ordered_json: the keys stay in the order written, which docs/eval.md lists.
using Json = nlohmann::ordered_json;

Json scheme_json(const EvalSchemeResult& scheme) {
  const EvalSummary& s = scheme.summary;
  Json j{{"spec", scheme.spec},
         {"config_hash", scheme.config_hash},
         {"raw_dtype", scheme.raw_dtype},
         {"tokens", s.tokens}};
  for (const auto& [name, value] : summary_figures(s)) j[name] = value;
  return j;
}

}  // namespace

void write_eval_json(const std::string& path, const EvalResult& r, const EvalOptions& o, const TokenText& text) {
  Json schemes = Json::array();
  for (const EvalSchemeResult& scheme : r.schemes) schemes.push_back(scheme_json(scheme));
  const Json doc{{"format", "dgq-eval-summary"},
                 {"version", 1},
                 {"dgq_version", r.dgq_version},
                 {"config_hash", r.config_hash},
                 {"model", r.model},
                 {"text", o.text_path},
                 {"kind", text.kind},
                 {"noise_rate", text.noise_rate},
                 {"ctx", o.ctx},
                 {"chunks", r.chunks},
                 {"scored_per_chunk", r.scored_per_chunk},
                 {"base", o.base},
                 {"query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off"},
                 {"cache", cache_mode_name(o.cache)},
                 {"keys", key_position_name(o.keys)},
                 {"raw_dtype", std::string(dtype_name(o.raw_dtype))},
                 {"ubatch", o.ubatch},
                 {"tokens_per_second", r.tokens_per_second},
                 {"schemes", std::move(schemes)}};
  write_text_file(path, doc.dump(2) + "\n");
}

}  // namespace dgq::sim

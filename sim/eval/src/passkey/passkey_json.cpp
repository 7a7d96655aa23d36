// The JSON summary of `dgq eval --task passkey` (format dgq-passkey-summary, docs/eval.md): the
// console table's numbers, per scheme and length.
#include <nlohmann/json.hpp>

#include "dgq/sim/files/output/text_output.hpp"
#include "passkey/passkey_output.hpp"

namespace dgq::sim {
namespace {

// ordered_json: the keys stay in the order written, which docs/eval.md lists.
using Json = nlohmann::ordered_json;

Json passkey_scheme_json(const PasskeySchemeResult& s) {
  Json lengths = Json::array();
  for (const PasskeyLengthSummary& l : s.by_length)
    lengths.push_back(
        Json{{"length", l.length}, {"prompts", l.prompts}, {"accuracy", l.accuracy}, {"logprob_mean", l.logprob_mean}});
  return Json{{"spec", s.spec},
              {"config_hash", s.config_hash},
              {"raw_dtype", s.raw_dtype},
              {"bits_per_element", s.bits_per_element},
              {"bits_averaged", s.bits_averaged},
              {"bits_k", s.bits_k},
              {"bits_v", s.bits_v},
              {"accuracy", s.accuracy},
              {"logprob_mean", s.logprob_mean},
              {"by_length", std::move(lengths)}};
}

}  // namespace

void write_passkey_json(const PasskeyOptions& o, const PasskeyResult& r) {
  Json schemes = Json::array();
  for (const PasskeySchemeResult& s : r.schemes) schemes.push_back(passkey_scheme_json(s));
  const Json doc{{"format", "dgq-passkey-summary"},
                 {"version", 1},
                 {"dgq_version", r.dgq_version},
                 {"config_hash", r.config_hash},
                 {"task", "passkey"},
                 {"model", r.model},
                 {"text", o.task_path},
                 {"prompts", r.prompts},
                 {"query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off"},
                 {"cache", cache_mode_name(r.cache)},
                 {"keys", key_position_name(r.keys)},
                 {"raw_dtype", std::string(dtype_name(r.raw_dtype))},
                 {"ubatch", r.ubatch},
                 {"tokens_per_second", r.tokens_per_second},
                 {"schemes", std::move(schemes)}};
  write_text_file(o.json_path, doc.dump(2) + "\n");
}

}  // namespace dgq::sim

#pragma once
// What identifies an eval run: the run_identity text that chunk and base-logits files must
// match exactly to be reused, and the per-scheme configuration text behind each run's
// config_hash (docs/results-format.md, "Provenance").
#include <cstdint>
#include <string>

#include "dgq/sim/eval/eval.hpp"

namespace dgq::sim {

// "model=...;tokens=N:HASH;ctx=...;chunks=...;base=...;query_rounding=..." and, with_schemes,
// ";save_logits=...;schemes=a|b|": everything that decides a chunk's numbers.
std::string eval_run_identity(const ModelConfig& model, const TokenText& text, const EvalOptions& o,
                              std::int64_t chunks, bool with_schemes);

// One scheme's run: "eval", model, tokens, ctx, chunks, canonical base, query rounding and the
// scheme's canonical spec, one "key=value" line each.
std::string eval_config_text(const ModelConfig& model, const TokenText& text, const EvalOptions& o, std::int64_t chunks,
                             const std::string& spec);

// The chunks a run scores: every whole chunk of the text, at most o.max_chunks (when > 0).
std::int64_t eval_chunk_count(const TokenText& text, const EvalOptions& o);

}  // namespace dgq::sim

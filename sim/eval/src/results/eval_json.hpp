#pragma once
// `dgq eval --json PATH`: the summary of a run as JSON (format dgq-eval-summary, docs/eval.md).
#include <string>

#include "dgq/sim/eval/eval.hpp"

namespace dgq::sim {

// Written through nlohmann-json (strings escaped, a non-finite number as null, the keys in the
// documented order) to PATH.partial, renamed when whole.
void write_eval_json(const std::string& path, const EvalResult& result, const EvalOptions& options,
                     const TokenText& text);

}  // namespace dgq::sim

#pragma once
// `dgq eval --task passkey` (docs/eval.md, "The passkey task"): the options of the perplexity
// task that have no meaning here are refused by name, then the run is sim::run_passkey.
#include <CLI/CLI.hpp>

#include "dgq/sim/eval/passkey.hpp"

namespace dgq::cli {

// Throws ParameterError naming the first perplexity-only option given (--ctx, --base,
// --base-logits, --chunks, --save-logits, --allow-mixed-versions): each prompt's length is in
// the task file, exact match needs no base cache, and a passkey run is not resumed.
void refuse_perplexity_options(const CLI::App& eval);
// Runs the task, prints its table and where the results went.
void run_passkey_command(const sim::PasskeyOptions& options);

}  // namespace dgq::cli

#pragma once
// What `dgq eval --task passkey` writes (docs/eval.md, "The passkey task"): the results file
// (format dgq-passkey-results) and the JSON summary (format dgq-passkey-summary). Both are
// written through OUTPUT.partial and renamed when whole.
#include "dgq/sim/eval/passkey.hpp"

namespace dgq::sim {

void write_passkey_results_file(const PasskeyOptions& options, const ModelConfig& config, const PasskeyTask& task,
                                const PasskeyResult& result);
void write_passkey_json(const PasskeyOptions& options, const PasskeyResult& result);

}  // namespace dgq::sim

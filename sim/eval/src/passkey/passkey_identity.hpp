#pragma once
// The configuration texts of passkey runs (docs/results-format.md, "Provenance"), whose
// config_hash the results file records: one per scheme (passkey_config_text in
// dgq/sim/eval/passkey.hpp) and one for the whole run, every scheme in order.
#include <string>

#include "dgq/sim/eval/passkey.hpp"

namespace dgq::sim {

std::string passkey_run_config_text(const ModelConfig& config, const PasskeyTask& task, const PasskeyOptions& options);

}  // namespace dgq::sim

// replay_config_text(): what determines a replay run's numbers, as the text its config_hash
// is taken of (docs/results-format.md, "Provenance").
#include "dgq/sim/replay/replay.hpp"

namespace dgq::sim {

std::string replay_config_text(const std::string& scheme_spec, const TraceMeta& trace, const std::vector<int>& layers) {
  std::string text = "replay\nscheme=" + scheme_spec + "\nlayers=";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(layers[i]);
  }
  text += '\n';
  text += trace_identity_text(trace);
  return text;
}

}  // namespace dgq::sim

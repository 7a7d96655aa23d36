#pragma once
// A cache with a spec of its own for some layers (docs/eval.md, "Layer plans"): bits spent where
// a layer's attention is most sensitive, as KVTuner (ICML 2025) allocates them. Its spec is
// "DEFAULT;LAYERS=SPEC;LAYERS=SPEC...": every layer takes DEFAULT but those listed after it,
// LAYERS being indices and ranges ("0,3-5"), each SPEC any cache spec (a scheme, a K/V pair,
// fp32). One string, like a K/V pair, so that eval, passkey, sweeps and the results' identity
// take a plan without a second code path. ';' because no family, parameter, modifier or pair
// uses it; the first '=' of an override ends its layer list (a list holds digits, ',' and '-').
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dgq::sim {

inline constexpr char kLayerPlanSeparator = ';';

struct LayerOverride {
  std::vector<std::int64_t> layers;  // ascending, no repeats
  std::string spec;
};
struct LayerPlan {
  std::string default_spec;
  std::vector<LayerOverride> overrides;
};

// The parts of "DEFAULT;LAYERS=SPEC..."; std::nullopt for a spec without ';'. ParameterError
// naming the spec for an empty part, a missing '=', a bad layer list, or a layer listed twice.
std::optional<LayerPlan> split_layer_plan(std::string_view spec);
// The canonical text of a plan whose parts are canonical already: the layers of equal specs
// merged, layers whose spec is the default's dropped, overrides ordered by their first layer,
// lists written with ranges ("0,3-5"); DEFAULT alone when nothing is left.
std::string join_layer_plan(const LayerPlan& plan);

}  // namespace dgq::sim

// Layer plans (layer_plan.hpp): parsing and the canonical text.
#include "cache/layer_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "dgq/errors.hpp"

namespace dgq::sim {
namespace {

[[noreturn]] void fail(std::string_view spec, const std::string& why) {
  throw ParameterError("cache spec '" + std::string(spec) + "': " + why +
                       " (a layer plan is DEFAULT;LAYERS=SPEC;..., LAYERS like 0,3-5)");
}

std::int64_t layer_index(std::string_view spec, std::string_view text) {
  if (text.empty() || text.size() > 6 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    fail(spec, "layer '" + std::string(text) + "' is not a layer index");
  return std::stoll(std::string(text));
}

std::vector<std::int64_t> parse_layers(std::string_view spec, std::string_view list) {
  std::vector<std::int64_t> layers;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const std::int64_t first = layer_index(spec, item.substr(0, dash));
    const std::int64_t last = dash == std::string_view::npos ? first : layer_index(spec, item.substr(dash + 1));
    if (last < first) fail(spec, "layer range '" + std::string(item) + "' runs backwards");
    for (std::int64_t l = first; l <= last; ++l) layers.push_back(l);
    start = comma + 1;
  }
  return layers;
}

std::string layer_list_text(const std::vector<std::int64_t>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(layers[i]);
    if (j > i) out += '-' + std::to_string(layers[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::optional<LayerPlan> split_layer_plan(std::string_view spec) {
  if (spec.find(kLayerPlanSeparator) == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = spec.find(kLayerPlanSeparator, start);
    parts.push_back(spec.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  LayerPlan plan;
  if (parts[0].empty()) fail(spec, "the default cache is empty");
  plan.default_spec = std::string(parts[0]);
  std::set<std::int64_t> seen;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t eq = parts[i].find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == parts[i].size())
      fail(spec, "override '" + std::string(parts[i]) + "' is not LAYERS=SPEC");
    LayerOverride o{parse_layers(spec, parts[i].substr(0, eq)), std::string(parts[i].substr(eq + 1))};
    for (const std::int64_t l : o.layers)
      if (!seen.insert(l).second) fail(spec, "layer " + std::to_string(l) + " is listed twice");
    std::sort(o.layers.begin(), o.layers.end());
    plan.overrides.push_back(std::move(o));
  }
  return plan;
}

std::string join_layer_plan(const LayerPlan& plan) {
  std::map<std::string, std::vector<std::int64_t>> by_spec;
  for (const LayerOverride& o : plan.overrides) {
    if (o.spec == plan.default_spec) continue;
    std::vector<std::int64_t>& layers = by_spec[o.spec];
    layers.insert(layers.end(), o.layers.begin(), o.layers.end());
  }
  std::vector<LayerOverride> merged;
  for (auto& [spec, layers] : by_spec) {
    std::sort(layers.begin(), layers.end());
    merged.push_back({layers, spec});
  }
  std::sort(merged.begin(), merged.end(),
            [](const LayerOverride& a, const LayerOverride& b) { return a.layers[0] < b.layers[0]; });
  std::string out = plan.default_spec;
  for (const LayerOverride& o : merged) out += kLayerPlanSeparator + layer_list_text(o.layers) + "=" + o.spec;
  return out;
}

}  // namespace dgq::sim

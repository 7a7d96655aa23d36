// Parsing a spec against the registry (dgq/registry.hpp): make_scheme and parse_spec read it
// once, against the family's declared parameters and the registered modifiers, into SchemeArgs.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"
#include "dgq/spelling_suggestion.hpp"
#include "spec_args.hpp"

namespace dgq {
namespace {

// The parameters in declaration order, each given or defaulted, with SpecArgs's checks and
// messages; the leftover-key check is the caller's (after the factory, as always).
SchemeArgs read_params(schemes::SpecArgs& spec, std::span<const SchemeParam> params) {
  SchemeArgs::Values values;
  for (const SchemeParam& p : params) {
    const std::string key(p.key);
    switch (p.kind) {
      case SchemeParam::Kind::integer: {
        schemes::SpecArgs defaults(spec.family() + ":" + key + "=" + std::string(p.default_text));
        const int fallback = defaults.take_int(key, 0, p.min, p.max);
        values.emplace(key, spec.take_int(key, fallback, p.min, p.max));
        break;
      }
      case SchemeParam::Kind::number: {
        schemes::SpecArgs defaults(spec.family() + ":" + key + "=" + std::string(p.default_text));
        values.emplace(key, spec.take_float(key, defaults.take_float(key, 0.0f)));
        break;
      }
      case SchemeParam::Kind::word: {
        std::string v = spec.take_string(key, p.default_text);
        if (p.check != nullptr) p.check(v);
        values.emplace(key, std::move(v));
        break;
      }
    }
  }
  return SchemeArgs(spec.family(), std::move(values));
}

std::string known_names(Device device) {
  std::string known;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device == device) known += (known.empty() ? "" : ", ") + std::string(f.name);
  }
  return known;
}

// The keys a spec of the family may hold, in the order `dgq schemes` lists them: its own, then
// the modifiers' (a family may declare a modifier's key itself, as dgq3 does rot: listed once).
std::vector<std::string> keys_read(std::span<const SchemeParam> params) {
  std::vector<std::string> keys;
  for (const SchemeParam& p : params) keys.emplace_back(p.key);
  for (const SchemeModifier& m : scheme_modifier_list()) {
    if (std::find(keys.begin(), keys.end(), m.key) == keys.end()) keys.emplace_back(m.key);
  }
  return keys;
}

// Every registered modifier's (key, value) taken from the spec, defaulted and checked, in
// scheme_modifier_list's order (after the family's own keys, which may include a modifier's).
std::vector<std::pair<std::string, std::string>> read_modifiers(schemes::SpecArgs& spec) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const SchemeModifier& m : scheme_modifier_list()) {
    values.emplace_back(std::string(m.key), spec.take_string(m.key, m.default_value));
    if (m.check != nullptr) m.check(values.back().second);
  }
  return values;
}

// The registry is the only list of families, so the guess comes from it (CPU entries: every
// family has one, and their order is the listing order).
std::string unknown_family_message(const std::string& family) {
  std::string message = "unknown scheme family '" + family + "'";
  std::vector<std::string> candidates = scheme_families();
  for (const SchemeFamily& f : scheme_family_list())
    if (f.device == Device::cpu) candidates.insert(candidates.end(), f.aliases.begin(), f.aliases.end());
  if (const std::string guess = closest_spelling(family, candidates); !guess.empty())
    message += ": did you mean '" + guess + "'?";
  return message + " (known: " + known_names(Device::cpu) + ")";
}

}  // namespace

const SchemeArgs::Value& SchemeArgs::at(std::string_view key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error(family_ + ": parameter '" + std::string(key) + "' is not declared");
  return it->second;
}

int SchemeArgs::integer(std::string_view key) const { return std::get<int>(at(key)); }
float SchemeArgs::number(std::string_view key) const { return std::get<float>(at(key)); }
const std::string& SchemeArgs::word(std::string_view key) const { return std::get<std::string>(at(key)); }

std::string spec_with_key(std::string_view spec, std::string_view key, std::string_view value) {
  std::string out(spec);
  out += spec.find(':') == std::string_view::npos ? ':' : ',';
  out += key;
  out += '=';
  out += value;
  return out;
}

std::string scheme_family_of(std::string_view spec) {
  if (const auto pair = split_kv_pair_spec(spec))
    return scheme_family_of(pair->k) + kKvPairSeparator + scheme_family_of(pair->v);
  std::string_view family = spec.substr(0, spec.find(':'));
  while (!family.empty() && family.front() == ' ') family.remove_prefix(1);
  while (!family.empty() && family.back() == ' ') family.remove_suffix(1);
  return std::string(family);
}

std::unique_ptr<Scheme> make_scheme(std::string_view spec, Device device) {
  // ';' makes `dgq eval`'s layer plan (sim/eval/src/cache/layer_plan.hpp), a cache of many schemes
  // that only a model's layers can read: said here, where "unknown family" would mislead.
  if (spec.find(';') != std::string_view::npos)
    throw ParameterError("scheme '" + std::string(spec) +
                         "': ';' makes a layer plan, which only dgq eval reads (--scheme, both tasks)");
  if (const auto pair = split_kv_pair_spec(spec)) {
    std::unique_ptr<Scheme> k = make_scheme(pair->k, device), v = make_scheme(pair->v, device);
    if (k->spec() == v->spec()) return k;
    return make_kv_pair_scheme(std::move(k), std::move(v), device);
  }
  schemes::SpecArgs args(spec);
  const SchemeFamily* f = find_scheme_family(args.family(), device);
  if (f == nullptr) {
    if (device != Device::cpu && find_scheme_family(args.family(), Device::cpu) != nullptr) {
      throw ParameterError("scheme '" + std::string(spec) + "' has no CUDA implementation: only " +
                           known_names(device) + " specs run on the GPU");
    }
    throw ParameterError(unknown_family_message(args.family()));
  }
  const SchemeArgs typed = read_params(args, f->params);
  const auto modifier_values = read_modifiers(args);
  std::unique_ptr<Scheme> scheme = f->make(typed);
  args.finish(keys_read(f->params));
  for (std::size_t i = 0; i < modifier_values.size(); ++i) {
    const std::string& value = modifier_values[i].second;
    const SchemeModifier& m = scheme_modifier_list()[i];
    if (value != m.default_value) scheme = m.wrap(std::move(scheme), value, device);
  }
  return scheme;
}

void parse_scheme_args(std::string_view spec, std::span<const SchemeParam> params,
                       const std::function<void(const SchemeArgs&)>& use) {
  schemes::SpecArgs args(spec);
  use(read_params(args, params));
  args.finish(keys_read(params));  // make_scheme's list, so that both report alike
}

std::unique_ptr<Scheme> make_scheme(std::string_view spec) { return make_scheme(spec, Device::cpu); }

const std::string& ParsedSpec::modifier(std::string_view key) const {
  for (const auto& [k, v] : modifiers) {
    if (k == key) return v;
  }
  throw std::logic_error("ParsedSpec::modifier: no scheme modifier has the key '" + std::string(key) + "'");
}

std::vector<std::string> ParsedSpec::applied_modifiers() const {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < modifiers.size(); ++i) {
    if (modifiers[i].second != scheme_modifier_list()[i].default_value) keys.push_back(modifiers[i].first);
  }
  return keys;
}

ParsedSpec parse_spec(std::string_view spec, Device device) {
  if (spec.find(';') != std::string_view::npos || split_kv_pair_spec(spec))
    throw ParameterError("scheme '" + std::string(spec) + "' is a K/V pair or a layer plan, not one scheme");
  schemes::SpecArgs args(spec);
  const SchemeFamily* f = find_scheme_family(args.family(), device);
  if (f == nullptr) throw ParameterError(unknown_family_message(args.family()));
  ParsedSpec parsed{f, read_params(args, f->params), {}};
  parsed.modifiers = read_modifiers(args);
  args.finish(keys_read(f->params));
  return parsed;
}

}  // namespace dgq

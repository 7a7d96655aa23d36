// The scheme registry (dgq/registry.hpp): families register themselves from their own files;
// make_scheme parses a spec once, against the family's declared parameters, into SchemeArgs.
#include "dgq/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/spelling_suggestion.hpp"
#include "spec_args.hpp"

namespace dgq {
namespace {

// Function-local, so that registration from other files' static initializers finds it built
// whatever the order in which the linker runs those initializers.
std::vector<SchemeFamily>& families() {
  static std::vector<SchemeFamily> list;
  return list;
}

std::vector<SchemeModifier>& modifiers() {
  static std::vector<SchemeModifier> list;
  return list;
}

bool listed_before(const SchemeFamily& a, const SchemeFamily& b) {
  if (a.order != b.order) return a.order < b.order;
  if (a.name != b.name) return a.name < b.name;
  return a.device < b.device;
}

// The names whose Device::cpu entry is their reference's, listed under cpu until cpu/
// registers its own implementation (static initializers run in any order).
std::vector<std::string>& derived_cpu_names() {
  static std::vector<std::string> names;
  return names;
}

void insert_sorted(const SchemeFamily& f) {
  auto& list = families();
  list.insert(std::upper_bound(list.begin(), list.end(), f, listed_before), f);
}

// "[1, 65536]" for integers, the declared words otherwise.
std::string range_text(const SchemeParam& p) {
  if (p.kind != SchemeParam::Kind::integer) return std::string(p.range);
  // Appended piece by piece: GCC 12 reports a false -Wrestrict for "[" + std::to_string(...).
  std::string text(1, '[');
  text += std::to_string(p.min);
  text += ", ";
  text += std::to_string(p.max);
  text += ']';
  return text;
}

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
  for (const SchemeFamily& f : families()) {
    if (f.device == device) known += (known.empty() ? "" : ", ") + std::string(f.name);
  }
  return known;
}

// " (also fp8, fp8_e4m3)" after a family's name in help; "" without aliases.
std::string aliases_text(const SchemeFamily& f, std::string_view before, std::string_view quote) {
  if (f.aliases.empty()) return "";
  std::string text = std::string(before) + (before.empty() ? " (also " : "also ");
  for (std::size_t i = 0; i < f.aliases.size(); ++i)
    text += (i ? ", " : "") + std::string(quote) + std::string(f.aliases[i]) + std::string(quote);
  return text + (before.empty() ? ")" : "");
}

// The keys a spec of the family may hold, in the order `dgq schemes` lists them: its own, then
// the modifiers' (a family may declare a modifier's key itself, as dgq3 does rot: listed once).
std::vector<std::string> keys_read(std::span<const SchemeParam> params) {
  std::vector<std::string> keys;
  for (const SchemeParam& p : params) keys.emplace_back(p.key);
  for (const SchemeModifier& m : modifiers()) {
    if (std::find(keys.begin(), keys.end(), m.key) == keys.end()) keys.emplace_back(m.key);
  }
  return keys;
}

// Every registered modifier's (key, value) taken from the spec, defaulted and checked, in
// scheme_modifier_list's order (after the family's own keys, which may include a modifier's).
std::vector<std::pair<std::string, std::string>> read_modifiers(schemes::SpecArgs& spec) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const SchemeModifier& m : modifiers()) {
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
  for (const SchemeFamily& f : families())
    if (f.device == Device::cpu) candidates.insert(candidates.end(), f.aliases.begin(), f.aliases.end());
  if (const std::string guess = closest_spelling(family, candidates); !guess.empty())
    message += ": did you mean '" + guess + "'?";
  return message + " (known: " + known_names(Device::cpu) + ")";
}

}  // namespace

std::string_view param_kind_name(SchemeParam::Kind k) {
  switch (k) {
    case SchemeParam::Kind::integer:
      return "integer";
    case SchemeParam::Kind::number:
      return "number";
    case SchemeParam::Kind::word:
      return "word";
  }
  return "?";
}

std::string_view device_name(Device d) {
  switch (d) {
    case Device::cpu:
      return "cpu";
    case Device::cuda:
      return "cuda";
    case Device::reference:
      return "reference";
  }
  return "?";
}

const SchemeArgs::Value& SchemeArgs::at(std::string_view key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error(family_ + ": parameter '" + std::string(key) + "' is not declared");
  return it->second;
}

int SchemeArgs::integer(std::string_view key) const { return std::get<int>(at(key)); }
float SchemeArgs::number(std::string_view key) const { return std::get<float>(at(key)); }
const std::string& SchemeArgs::word(std::string_view key) const { return std::get<std::string>(at(key)); }

bool register_scheme_family(const SchemeFamily& f) {
  auto& derived = derived_cpu_names();
  const auto derived_it = std::find(derived.begin(), derived.end(), f.name);
  if (f.device == Device::cpu && derived_it != derived.end()) {
    // The fast implementation replaces the reference's entry listed under cpu.
    auto& list = families();
    list.erase(std::find_if(list.begin(), list.end(),
                            [&](const SchemeFamily& g) { return g.name == f.name && g.device == Device::cpu; }));
    derived.erase(derived_it);
    insert_sorted(f);
    return true;
  }
  if (find_scheme_family(f.name, f.device) != nullptr) {
    std::fprintf(stderr, "dgq: scheme family '%.*s' is registered twice for %.*s\n", static_cast<int>(f.name.size()),
                 f.name.data(), static_cast<int>(device_name(f.device).size()), device_name(f.device).data());
    std::abort();
  }
  insert_sorted(f);
  if (f.device == Device::reference && find_scheme_family(f.name, Device::cpu) == nullptr) {
    SchemeFamily on_cpu = f;
    on_cpu.device = Device::cpu;
    insert_sorted(on_cpu);
    derived.emplace_back(f.name);
  }
  return true;
}

const std::vector<SchemeFamily>& scheme_family_list() { return families(); }

bool register_scheme_modifier(const SchemeModifier& m) {
  for (const SchemeModifier& other : modifiers()) {
    if (other.key == m.key) {
      std::fprintf(stderr, "dgq: scheme modifier '%.*s' is registered twice\n", static_cast<int>(m.key.size()),
                   m.key.data());
      std::abort();
    }
  }
  auto& list = modifiers();
  list.insert(std::upper_bound(list.begin(), list.end(), m,
                               [](const SchemeModifier& a, const SchemeModifier& b) { return a.order < b.order; }),
              m);
  return true;
}

const std::vector<SchemeModifier>& scheme_modifier_list() { return modifiers(); }

std::string spec_with_key(std::string_view spec, std::string_view key, std::string_view value) {
  std::string out(spec);
  out += spec.find(':') == std::string_view::npos ? ':' : ',';
  out += key;
  out += '=';
  out += value;
  return out;
}

const SchemeFamily* find_scheme_family(std::string_view name, Device device) {
  for (const SchemeFamily& f : families()) {
    if (f.name == name && f.device == device) return &f;
  }
  for (const SchemeFamily& f : families()) {
    if (f.device == device && std::find(f.aliases.begin(), f.aliases.end(), name) != f.aliases.end()) return &f;
  }
  return nullptr;
}

bool has_fast_cpu_implementation(std::string_view name) {
  const auto& derived = derived_cpu_names();
  return find_scheme_family(name, Device::cpu) != nullptr && find_scheme_family(name, Device::reference) != nullptr &&
         std::find(derived.begin(), derived.end(), name) == derived.end();
}

std::string scheme_family_of(std::string_view spec) {
  if (const auto pair = split_kv_pair_spec(spec)) return scheme_family_of(pair->k) + kKvPairSeparator + scheme_family_of(pair->v);
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
    if (value != modifiers()[i].default_value) scheme = modifiers()[i].wrap(std::move(scheme), value, device);
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

std::vector<std::string> scheme_families() {
  std::vector<std::string> names;
  for (const SchemeFamily& f : families()) {
    if (f.device == Device::cpu) names.emplace_back(f.name);
  }
  return names;
}

std::string scheme_help(Device device) {
  std::string out;
  for (const SchemeFamily& f : families()) {
    if (f.device != device) continue;
    out += std::string(f.name) + aliases_text(f, "", "") + ": " + std::string(f.summary) + "\n";
    for (const SchemeParam& p : f.params) {
      out += "    " + std::string(p.key) + "=" + std::string(p.default_text) + "  (" + std::string(param_kind_name(p.kind)) +
             " " + range_text(p) + ") " + std::string(p.help) + "\n";
    }
  }
  for (const SchemeModifier& m : modifiers()) {
    out += "any family: " + std::string(m.key) + "=" + std::string(m.default_value) + "  (" + std::string(m.values) +
           ") " + std::string(m.help) + "\n";
  }
  return out;
}

static std::string scheme_family_table_markdown();  // the families' table, defined below

std::string scheme_table_markdown() {
  std::string out = scheme_family_table_markdown();
  if (modifiers().empty()) return out;
  out += "\n| modifier (any family) | default | values | what it does |\n|---|---|---|---|\n";
  for (const SchemeModifier& m : modifiers()) {
    out += "| `" + std::string(m.key) + "` | `" + std::string(m.default_value) + "` | " + std::string(m.values) + " | " +
           std::string(m.help) + " |\n";
  }
  return out;
}

static std::string scheme_family_table_markdown() {
  // CPU families only: every family has its CPU reference, and the table must not depend on
  // whether this binary was built with CUDA (docs/cuda.md says which families run on the GPU).
  std::string out = "| family | parameters (default, range) | stores |\n|---|---|---|\n";
  for (const SchemeFamily& f : families()) {
    if (f.device != Device::cpu) continue;
    std::string params;
    for (const SchemeParam& p : f.params) {
      params += (params.empty() ? "" : "<br>") + std::string("`") + std::string(p.key) + "=" +
                std::string(p.default_text) + "` " + range_text(p);
    }
    out += "| `" + std::string(f.name) + "`" + aliases_text(f, "<br>", "`") + " | " + (params.empty() ? "none" : params) + " | " + std::string(f.summary) +
           " |\n";
  }
  return out;
}

}  // namespace dgq

// The scheme registry (dgq/registry.hpp): families and modifiers register themselves from their
// own files; lookups by name and device. Parsing a spec against what is registered is
// spec_parser.cpp's, the help and the docs table scheme_help.cpp's.
#include "dgq/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

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

}  // namespace

std::string_view param_kind_name(SchemeParam::Kind k) {
  switch (k) {
    case SchemeParam::Kind::integer: return "integer";
    case SchemeParam::Kind::number: return "number";
    case SchemeParam::Kind::word: return "word";
  }
  return "?";
}

std::string_view device_name(Device d) {
  switch (d) {
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
    case Device::reference: return "reference";
  }
  return "?";
}

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

std::vector<std::string> scheme_families() {
  std::vector<std::string> names;
  for (const SchemeFamily& f : families()) {
    if (f.device == Device::cpu) names.emplace_back(f.name);
  }
  return names;
}

}  // namespace dgq

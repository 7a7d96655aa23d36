// The registry as plain Python data (dgq/registry.hpp is the only list of families): what
// `dgq schemes` prints, as dicts, so that a notebook iterates the same list the CLI, the docs
// table and the conformance tests do.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include "bindings.hpp"
#include "dgq/registry.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

// An integer's range as its bounds, a number's or word's as the registry's words.
nb::dict param_dict(const SchemeParam& p) {
  nb::dict d;
  d["key"] = p.key;
  d["kind"] = std::string(param_kind_name(p.kind));
  d["default"] = p.default_text;
  if (p.kind == SchemeParam::Kind::integer) {
    d["min"] = p.min;
    d["max"] = p.max;
  } else {
    d["range"] = p.range;
  }
  d["help"] = p.help;
  return d;
}

nb::list families() {
  nb::list out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cpu) continue;  // what make_scheme(spec) builds; every family has one
    nb::list params;
    for (const SchemeParam& p : f.params) params.append(param_dict(p));
    nb::dict d;
    d["name"] = f.name;
    d["summary"] = f.summary;
    d["params"] = params;
    d["stored_size"] = f.stored_size == SchemeFamily::StoredSize::exact ? "exact" : "at_most";
    d["fast_cpu"] = has_fast_cpu_implementation(f.name);
    out.append(d);
  }
  return out;
}

nb::list modifiers() {
  nb::list out;
  for (const SchemeModifier& mod : scheme_modifier_list()) {
    nb::dict d;
    d["key"] = mod.key;
    d["default"] = mod.default_value;
    d["values"] = mod.values;
    d["help"] = mod.help;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_registry(nb::module_& m) {
  m.def("families", &families,
        "The registered families (CPU), in listing order: name, summary, params (key, kind, "
        "default, min/max or range, help), stored_size, fast_cpu.");
  m.def("modifiers", &modifiers, "The keys every family accepts (rot=hadamard, ...): key, default, values, help.");
  m.def(
      "scheme_help", [] { return scheme_help(Device::cpu); }, "The text `dgq schemes` prints.");
}

}  // namespace dgq::python

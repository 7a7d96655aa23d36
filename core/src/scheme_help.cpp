// The registry as people read it: `dgq schemes`' help text and docs/schemes.md's generated table.
#include <string>

#include "dgq/registry.hpp"

namespace dgq {
namespace {

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

// " (also fp8, fp8_e4m3)" after a family's name in help; "" without aliases.
std::string aliases_text(const SchemeFamily& f, std::string_view before, std::string_view quote) {
  if (f.aliases.empty()) return "";
  std::string text = std::string(before) + (before.empty() ? " (also " : "also ");
  for (std::size_t i = 0; i < f.aliases.size(); ++i)
    text += (i ? ", " : "") + std::string(quote) + std::string(f.aliases[i]) + std::string(quote);
  return text + (before.empty() ? ")" : "");
}

}  // namespace

std::string scheme_help(Device device) {
  std::string out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != device) continue;
    out += std::string(f.name) + aliases_text(f, "", "") + ": " + std::string(f.summary) + "\n";
    for (const SchemeParam& p : f.params) {
      out += "    " + std::string(p.key) + "=" + std::string(p.default_text) + "  (" +
             std::string(param_kind_name(p.kind)) + " " + range_text(p) + ") " + std::string(p.help) + "\n";
    }
  }
  for (const SchemeModifier& m : scheme_modifier_list()) {
    out += "any family: " + std::string(m.key) + "=" + std::string(m.default_value) + "  (" + std::string(m.values) +
           ") " + std::string(m.help) + "\n";
  }
  return out;
}

static std::string scheme_family_table_markdown();  // the families' table, defined below

std::string scheme_table_markdown() {
  std::string out = scheme_family_table_markdown();
  if (scheme_modifier_list().empty()) return out;
  out += "\n| modifier (any family) | default | values | what it does |\n|---|---|---|---|\n";
  for (const SchemeModifier& m : scheme_modifier_list()) {
    out += "| `" + std::string(m.key) + "` | `" + std::string(m.default_value) + "` | " + std::string(m.values) +
           " | " + std::string(m.help) + " |\n";
  }
  return out;
}

static std::string scheme_family_table_markdown() {
  // CPU families only: every family has its CPU reference, and the table must not depend on
  // whether this binary was built with CUDA (docs/cuda.md says which families run on the GPU).
  std::string out = "| family | parameters (default, range) | stores |\n|---|---|---|\n";
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cpu) continue;
    std::string params;
    for (const SchemeParam& p : f.params) {
      params += (params.empty() ? "" : "<br>") + std::string("`") + std::string(p.key) + "=" +
                std::string(p.default_text) + "` " + range_text(p);
    }
    out += "| `" + std::string(f.name) + "`" + aliases_text(f, "<br>", "`") + " | " +
           (params.empty() ? "none" : params) + " | " + std::string(f.summary) + " |\n";
  }
  return out;
}

}  // namespace dgq

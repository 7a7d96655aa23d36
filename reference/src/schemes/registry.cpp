// make_scheme: the one place that maps family names to implementations.
#include <array>
#include <string>
#include <utility>

#include "dgq/errors.hpp"
#include "schemes/rotation_scheme.hpp"
#include "schemes/scheme_factories.hpp"

namespace dgq {
namespace {

using Factory = std::unique_ptr<Scheme> (*)(schemes::SpecArgs&);

constexpr std::array<std::pair<std::string_view, Factory>, 15> kFamilies{{
    {"dgq", schemes::make_dgq_scheme},
    {"fp16", schemes::make_fp16_scheme},
    {"int8-token", schemes::make_int8_token_scheme},
    {"int8-group64", schemes::make_int8_group64_scheme},
    {"int4-group64", schemes::make_int4_group64_scheme},
    {"fp8-e4m3", schemes::make_fp8_e4m3_scheme},
    {"q8_0", schemes::make_q8_0_scheme},
    {"kivi-4", schemes::make_kivi4_scheme},
    {"kivi-2", schemes::make_kivi2_scheme},
    {"q4_0", schemes::make_q4_0_scheme},
    {"q4_1", schemes::make_q4_1_scheme},
    {"q5_0", schemes::make_q5_0_scheme},
    {"q5_1", schemes::make_q5_1_scheme},
    {"iq4_nl", schemes::make_iq4_nl_scheme},
    {"turboquant", schemes::make_turboquant_scheme},
}};

}  // namespace

std::unique_ptr<Scheme> make_scheme(std::string_view spec) {
  schemes::SpecArgs args(spec);
  for (const auto& [name, factory] : kFamilies) {
    if (name == args.family()) {
      const std::string rotation = args.take_string("rot", "none");  // a modifier of every family
      std::unique_ptr<Scheme> scheme = factory(args);
      args.finish();
      return schemes::apply_rotation(std::move(scheme), rotation);
    }
  }
  std::string known;
  for (const auto& [name, factory] : kFamilies) known += (known.empty() ? "" : ", ") + std::string(name);
  throw ParameterError("unknown scheme family '" + args.family() + "' (known: " + known + ")");
}

std::vector<std::string> scheme_families() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : kFamilies) names.emplace_back(name);
  return names;
}

}  // namespace dgq

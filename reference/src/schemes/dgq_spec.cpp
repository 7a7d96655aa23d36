#include "schemes/dgq_spec.hpp"

#include <string>

#include "dgq/dgq_parts.hpp"
#include "dgq/errors.hpp"

namespace dgq {
namespace schemes {

DgqParams take_dgq_params(SpecArgs& args) {
  const DgqParams defaults;
  DgqParams p;
  p.win = args.take_int("win", defaults.win, 1, 65536);
  p.group_ratio = args.take_float("group_ratio", defaults.group_ratio);
  p.min_var = args.take_float("min_var", defaults.min_var);
  p.max_groups = args.take_int("max_groups", defaults.max_groups, 1, 8);
  p.granularity = parse_granularity(args.take_string("granularity", granularity_name(defaults.granularity)));
  p.markers = parse_markers(args.take_string("markers", markers_name(defaults.markers)));
  p.validate();
  return p;
}

}  // namespace schemes

DgqParams dgq_params_from_spec(std::string_view spec) {
  schemes::SpecArgs args(spec);
  if (args.family() != "dgq") {
    throw ParameterError("scheme spec '" + std::string(spec) + "' is of family '" + args.family() +
                         "', not dgq");
  }
  // make_scheme's order: the factory's keys first, then the leftover-key check.
  const DgqParams p = schemes::take_dgq_params(args);
  args.finish();
  return p;
}

}  // namespace dgq

// The dgq family's parameters, declared once for every backend: the CPU scheme
// (reference/src/schemes/dgq_scheme.cpp) and the CUDA scheme (cuda/src/cuda_scheme.cpp)
// register them, so both accept, default and reject the same specs in the same words.
#include <string>

#include "dgq/dgq_parts.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq {
namespace {

void check_granularity(std::string_view v) { (void)parse_granularity(v); }
void check_markers(std::string_view v) { (void)parse_markers(v); }
void check_boundaries(std::string_view v) { (void)parse_boundaries(v); }

using Kind = SchemeParam::Kind;

// Defaults: DgqV1Params{} (checked by the conformance tests: the default spec is DgqV1Params{}'s).
constexpr SchemeParam kDgqParams[] = {
    {"win", Kind::integer, "16", 1, 65536, "", "tokens per block (rule 2)", nullptr},
    {"group_ratio", Kind::number, "0.75", 0, 0, "(0, 1]", "block variance ratio that starts a new segment (rule 5)",
     nullptr},
    {"min_var", Kind::number, "0.05", 0, 0, ">= 0", "floor of the token variance (rule 1)", nullptr},
    {"max_groups", Kind::integer, "5", 1, 8, "", "segment budget cap (rule 4)", nullptr},
    {"granularity", Kind::word, "segment", 0, 0, "segment or segment-channel",
     "one range per segment, or per segment and channel (rule 6)", check_granularity},
    {"markers", Kind::word, "table", 0, 0, "table, bitmap or inband", "how segment edges are stored (rule 8)",
     check_markers},
    {"boundaries", Kind::word, "adaptive", 0, 0, "adaptive or online",
     "the strongest change points of the tensor (rule 5), or each decided when the block after it is complete, "
     "first come (rule C3: the causal cache's)",
     check_boundaries},
};

}  // namespace

std::span<const SchemeParam> dgq_scheme_params() { return kDgqParams; }

DgqV1Params dgq_v1_params_from_args(const SchemeArgs& args) {
  DgqV1Params p;
  p.win = args.integer("win");
  p.group_ratio = args.number("group_ratio");
  p.min_var = args.number("min_var");
  p.max_groups = args.integer("max_groups");
  p.granularity = parse_granularity(args.word("granularity"));
  p.markers = parse_markers(args.word("markers"));
  p.boundaries = parse_boundaries(args.word("boundaries"));
  p.validate();
  return p;
}

std::string dgq_spec_of(const DgqV1Params& p) { return "dgq:" + p.to_string(); }

std::uint64_t dgq_planned_bytes(std::int64_t tokens, std::int64_t channels, const DgqV1Params& p) {
  DgqV1Encoded shape;
  shape.tokens = tokens;
  shape.channels = channels;
  shape.params = p;
  shape.segments = rules::segment_budget(tokens, p.max_groups, p.win);
  return shape.stored_bytes().total();
}

DgqV1Params dgq_v1_params_from_spec(std::string_view spec) {
  const std::string family = scheme_family_of(spec);
  if (family != "dgq") {
    throw ParameterError("scheme spec '" + std::string(spec) + "' is of family '" + family + "', not dgq");
  }
  // make_scheme's order: the declared keys, the family's validation, then the leftover-key check.
  DgqV1Params p;
  parse_scheme_args(spec, kDgqParams, [&p](const SchemeArgs& args) { p = dgq_v1_params_from_args(args); });
  return p;
}

}  // namespace dgq

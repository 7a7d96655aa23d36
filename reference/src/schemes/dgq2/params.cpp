// DGQ v2's parameters: declaration (for the registry), parsing and the canonical spec.
#include "dgq/schemes/dgq2/params.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq::schemes::dgq2 {
namespace {

std::string shortest(float v) {  // reads back to the same float, so the spec round-trips
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

[[noreturn]] void reject(std::string_view key, std::string_view value, std::string_view allowed) {
  throw ParameterError("dgq2: parameter '" + std::string(key) + "' = '" + std::string(value) + "' is not one of " +
                       std::string(allowed));
}

void check_kgran(std::string_view v) { (void)parse_granularity(v, "kgran"); }
void check_vgran(std::string_view v) { (void)parse_granularity(v, "vgran"); }
void check_range_dtype(std::string_view v) {
  if (v != "fp16" && v != "fp32") reject("range_dtype", v, "fp16, fp32");
}
void check_markers(std::string_view v) {
  if (v != "table" && v != "bitmap" && v != "inband") reject("markers", v, "table, bitmap, inband");
}
void check_boundaries(std::string_view v) {
  if (v != "adaptive" && v != "fixed" && v != "online") reject("boundaries", v, "adaptive, fixed, online");
}
void check_rot(std::string_view v) {
  if (v != "none" && v != "hadamard") reject("rot", v, "none, hadamard");
}
void check_rot_on(std::string_view v) {
  if (v != "kv" && v != "k" && v != "v") reject("rot_on", v, "kv, k, v");
}
void check_budget(std::string_view v) {
  if (v != "length" && v != "max_groups") reject("budget", v, "length, max_groups");
}
void check_seg_on(std::string_view v) {
  if (v != "rotated" && v != "input") reject("seg_on", v, "rotated, input");
}

constexpr int kMaxTokens = 1 << 30;

using Kind = SchemeParam::Kind;
// Defaults: Params{} (the conformance tests check that the default spec round-trips).
constexpr SchemeParam kParams[] = {
    {"bits", Kind::integer, "4", 2, 8, "", "code width: 2, 3, 4 or 8 bits, packed (rule V5)", nullptr},
    {"kbits", Kind::integer, "0", 0, 8, "", "code width of K (0: bits)", nullptr},
    {"vbits", Kind::integer, "0", 0, 8, "", "code width of V (0: bits)", nullptr},
    {"kgran", Kind::word, "segment-channel", 0, 0, "segment, segment-channel, token or segment-channel-group",
     "what shares one range in K (rule V3)", check_kgran},
    {"vgran", Kind::word, "token", 0, 0, "segment, segment-channel, token or segment-channel-group",
     "what shares one range in V (rule V3)", check_vgran},
    {"kgroup", Kind::integer, "64", 1, 65536, "", "tokens per group of kgran=segment-channel-group", nullptr},
    {"vgroup", Kind::integer, "64", 1, 65536, "", "tokens per group of vgran=segment-channel-group", nullptr},
    {"residual", Kind::integer, "0", 0, kMaxTokens, "", "most recent tokens kept in the input dtype (rule V1)",
     nullptr},
    {"range_dtype", Kind::word, "fp16", 0, 0, "fp16 or fp32", "how lo and hi are stored (rule V4)", check_range_dtype},
    {"markers", Kind::word, "table", 0, 0, "table, bitmap or inband", "how segment edges are stored (rule V6)",
     check_markers},
    {"boundaries", Kind::word, "adaptive", 0, 0, "adaptive, fixed or online",
     "v1's variance change points, equal-length segments of the same count (ablation), or change points "
     "decided first come as the blocks arrive (the causal cache's, rule C3) (rule V2)",
     check_boundaries},
    {"rot", Kind::word, "none", 0, 0, "none or hadamard",
     "llama.cpp's Hadamard rotation, applied by dgq2 itself (rule V0)", check_rot},
    {"rot_on", Kind::word, "kv", 0, 0, "kv, k or v", "with rot=hadamard: the roles rotated (rule V0)", check_rot_on},
    {"seg_on", Kind::word, "rotated", 0, 0, "rotated or input",
     "with rot=hadamard: variance curve of the rotated or the unrotated tensor (rule V2)", check_seg_on},
    {"win", Kind::integer, "16", 1, 65536, "", "tokens per block (v1 rule 2)", nullptr},
    {"group_ratio", Kind::number, "0.75", 0, 0, "(0, 1]", "block variance ratio that starts a segment (v1 rule 5)",
     nullptr},
    {"min_var", Kind::number, "0.05", 0, 0, ">= 0", "floor of the token variance (v1 rule 1)", nullptr},
    {"max_groups", Kind::integer, "5", 1, kMaxSegments, "", "segment budget cap (v1 rule 4; above 8 only dgq2)",
     nullptr},
    {"budget", Kind::word, "length", 0, 0, "length or max_groups",
     "segment budget: v1's length rule (2 below 2048 tokens), or max_groups at any length (rule V2)", check_budget},
};

}  // namespace

std::string_view granularity_name(RangeGranularity g) {
  switch (g) {
    case RangeGranularity::segment: return "segment";
    case RangeGranularity::segment_channel: return "segment-channel";
    case RangeGranularity::token: return "token";
    case RangeGranularity::segment_channel_group: return "segment-channel-group";
  }
  return "?";
}

RangeGranularity parse_granularity(std::string_view s, std::string_view key) {
  if (s == "segment") return RangeGranularity::segment;
  if (s == "segment-channel") return RangeGranularity::segment_channel;
  if (s == "token") return RangeGranularity::token;
  if (s == "segment-channel-group") return RangeGranularity::segment_channel_group;
  reject(key, s, "segment, segment-channel, token, segment-channel-group");
}

bool uses_segments(RangeGranularity g) { return g != RangeGranularity::token; }

Params Params::for_role(TensorRole role) const {
  Params r = *this;
  const int own = role == TensorRole::key ? kbits : vbits;
  if (own != 0) r.bits = own;
  r.rotate = rotate && (rot_on == RotatedRoles::kv || (rot_on == RotatedRoles::k) == (role == TensorRole::key));
  // Rule V5: a token role has no segments, so nothing to mark; in-band markers would only
  // cost it two codes (at 2 bits half its levels). It codes as under markers=table.
  if (r.granularity(role) == RangeGranularity::token && r.seg.markers == Markers::inband)
    r.seg.markers = Markers::table;
  return r;
}

int Params::segment_budget(std::int64_t quantized) const {
  if (!budget_max_groups) return rules::segment_budget(quantized, seg.max_groups, seg.win);
  if (quantized <= 0) return 0;
  if (quantized < 2 * static_cast<std::int64_t>(seg.win)) return 1;
  const std::int64_t blocks = (quantized + seg.win - 1) / seg.win;
  return static_cast<int>(std::min<std::int64_t>(seg.max_groups, blocks));
}

int Params::levels() const { return (1 << bits) - (seg.markers == Markers::inband ? 3 : 1); }

std::string Params::spec() const {
  const char* rot_on_name = rot_on == RotatedRoles::kv ? "kv" : (rot_on == RotatedRoles::k ? "k" : "v");
  return "dgq2:bits=" + std::to_string(bits) + ",kbits=" + std::to_string(kbits) + ",vbits=" + std::to_string(vbits) +
         ",kgran=" + std::string(granularity_name(kgran)) + ",vgran=" + std::string(granularity_name(vgran)) +
         ",kgroup=" + std::to_string(kgroup) + ",vgroup=" + std::to_string(vgroup) +
         ",residual=" + std::to_string(residual) +
         ",range_dtype=" + (range_dtype == RangeDtype::fp16 ? "fp16" : "fp32") +
         ",markers=" + std::string(markers_name(seg.markers)) +
         ",boundaries=" + (fixed_boundaries ? "fixed" : std::string(boundaries_name(seg.boundaries))) +
         ",rot=" + (rotate ? "hadamard" : "none") + ",rot_on=" + rot_on_name +
         ",seg_on=" + (segment_on_input ? "input" : "rotated") + ",win=" + std::to_string(seg.win) +
         ",group_ratio=" + shortest(seg.group_ratio) + ",min_var=" + shortest(seg.min_var) +
         ",max_groups=" + std::to_string(seg.max_groups) + ",budget=" + (budget_max_groups ? "max_groups" : "length");
}

std::span<const SchemeParam> dgq2_scheme_params() { return kParams; }

Params params_from_args(const SchemeArgs& args) {
  Params p;
  p.bits = args.integer("bits");
  if (p.bits != 2 && p.bits != 3 && p.bits != 4 && p.bits != 8) reject("bits", std::to_string(p.bits), "2, 3, 4, 8");
  p.kbits = args.integer("kbits");
  if (p.kbits != 0 && p.kbits != 2 && p.kbits != 3 && p.kbits != 4 && p.kbits != 8) {
    reject("kbits", std::to_string(p.kbits), "0, 2, 3, 4, 8");
  }
  p.vbits = args.integer("vbits");
  if (p.vbits != 0 && p.vbits != 2 && p.vbits != 3 && p.vbits != 4 && p.vbits != 8) {
    reject("vbits", std::to_string(p.vbits), "0, 2, 3, 4, 8");
  }
  p.kgran = parse_granularity(args.word("kgran"), "kgran");
  p.vgran = parse_granularity(args.word("vgran"), "vgran");
  p.kgroup = args.integer("kgroup");
  p.vgroup = args.integer("vgroup");
  p.residual = args.integer("residual");
  p.range_dtype = args.word("range_dtype") == "fp16" ? RangeDtype::fp16 : RangeDtype::fp32;
  p.seg.markers = parse_markers(args.word("markers"));
  p.fixed_boundaries = args.word("boundaries") == "fixed";
  p.seg.boundaries = args.word("boundaries") == "online" ? Boundaries::online : Boundaries::adaptive;
  p.rotate = args.word("rot") == "hadamard";
  const std::string& on = args.word("rot_on");
  p.rot_on = on == "kv" ? RotatedRoles::kv : (on == "k" ? RotatedRoles::k : RotatedRoles::v);
  p.segment_on_input = args.word("seg_on") == "input";
  p.seg.win = args.integer("win");
  p.seg.group_ratio = args.number("group_ratio");
  p.seg.min_var = args.number("min_var");
  p.seg.max_groups = args.integer("max_groups");
  p.budget_max_groups = args.word("budget") == "max_groups";
  try {
    DgqV1Params v1 = p.seg;  // v1's checks of group_ratio and min_var; max_groups is the registry's
    v1.max_groups = 1;
    v1.validate();
  } catch (const ParameterError& e) {
    throw ParameterError(std::string("dgq2: ") + e.what());
  }
  return p;
}

}  // namespace dgq::schemes::dgq2

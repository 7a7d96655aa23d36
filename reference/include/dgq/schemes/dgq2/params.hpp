#pragma once
// DGQ v2's parameters (docs/spec.md, "DGQ v2", parameter table): the segmentation of v1
// (win, group_ratio, min_var, max_groups, markers: a DgqV1Params, rules 1-5 and 8 unchanged) and
// what v2 adds: code width, range granularity per role, residual tokens, range dtype, fixed
// boundaries for the ablation, and its own Hadamard rotation (with the basis the segmentation
// is computed on).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"

namespace dgq::schemes::dgq2 {

// Which tokens and channels share one (lo, hi) range (rule V3).
enum class RangeGranularity : std::uint8_t {
  segment,                // one range per segment
  segment_channel,        // one per (segment, channel)
  token,                  // one per token (no segmentation)
  segment_channel_group,  // one per (group of G tokens inside a segment, channel)
};
enum class RangeDtype : std::uint8_t { fp16, fp32 };

std::string_view granularity_name(RangeGranularity g);
RangeGranularity parse_granularity(std::string_view s, std::string_view key);  // throws ParameterError naming key
bool uses_segments(RangeGranularity g);                                        // every granularity but token

// Which roles rot=hadamard rotates.
enum class RotatedRoles : std::uint8_t { kv, k, v };

struct Params {
  int bits = 4;              // 2, 3, 4 or 8
  int kbits = 0, vbits = 0;  // per-role override of bits; 0: bits
  RangeGranularity kgran = RangeGranularity::segment_channel;
  RangeGranularity vgran = RangeGranularity::token;
  int kgroup = 64, vgroup = 64;  // tokens per group of segment-channel-group
  int residual = 0;              // most recent tokens kept in the input dtype
  RangeDtype range_dtype = RangeDtype::fp16;
  // boundaries=fixed: equal-length segments, same count (ablation); boundaries=online is
  // seg.boundaries (v1's key: rule C3's first-come edges), adaptive neither.
  bool fixed_boundaries = false;
  bool rotate = false;  // rot=hadamard
  RotatedRoles rot_on = RotatedRoles::kv;
  bool segment_on_input = false;   // seg_on=input: variance curve of the unrotated input
  bool budget_max_groups = false;  // budget=max_groups: S <= max_groups at any length (rule V2)
  // win, group_ratio, min_var, max_groups, markers, boundaries (v1 rules 1-5, 8, C3). max_groups
  // may exceed v1's 8 (up to kMaxSegments): only dgq2's own budget (segment_budget) reads it.
  DgqV1Params seg;

  RangeGranularity granularity(TensorRole role) const { return role == TensorRole::key ? kgran : vgran; }
  int group(TensorRole role) const { return role == TensorRole::key ? kgroup : vgroup; }
  // A copy for one role: bits is the role's width (kbits/vbits, else bits) and rotate says
  // whether this role is rotated (rot and rot_on); a `token` role's markers are table's, so
  // that markers=inband reserves no codes where there is nothing to mark (rule V5). The layout,
  // segment and code functions take such a copy and read bits, rotate and markers from it.
  Params for_role(TensorRole role) const;
  // Quantization levels (steps): 2^bits - 1, or 2^bits - 3 with markers=inband (rule V5).
  int levels() const;
  std::string spec() const;  // canonical "dgq2:bits=4,kgran=...,..." with every parameter
  // Rule V2's segment budget for `quantized` tokens: v1's rule 4 (budget=length), or
  // max_groups capped by the number of win-token blocks (budget=max_groups); 1 below 2*win
  // tokens and 0 for none in both.
  int segment_budget(std::int64_t quantized) const;
};

inline constexpr int kMaxSegments = 64;

std::span<const SchemeParam> dgq2_scheme_params();
Params params_from_args(const SchemeArgs& args);  // throws ParameterError naming the key

}  // namespace dgq::schemes::dgq2

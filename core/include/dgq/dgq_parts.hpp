#pragma once
// The one declaration of how DGQ is stored as Compressed parts, shared by every backend's dgq
// Scheme (the CPU scheme in reference/src/schemes/dgq_scheme.cpp and the CUDA scheme), so the
// layout, the spec parameters and the corrupt-input messages cannot drift apart (ggml's lesson:
// one declaration of each block layout for every backend). Parts, in this order:
//   "codes"       tokens*channels int8, row-major (in-band markers applied in inband mode)
//   "ranges"      lo then hi, fp32 little-endian, per range entry: segments*C entries,
//                 C = 1 (granularity=segment) or channels (granularity=segment-channel)
//   "boundaries"  uint32 little-endian per interior segment edge (markers=table only)
//   "bitmap"      ceil(tokens/8) bytes, DgqV1Encoded::bitmap (markers=bitmap only)
// The segment count is not stored: it is the size of "ranges" over 8*C bytes, and dgq_decode
// checks it against the markers.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"

namespace dgq {

// The dgq family's spec parameters (win, group_ratio, min_var, max_groups, granularity,
// markers, boundaries; defaults DgqV1Params{}), which every backend's dgq family registers
// (dgq/registry.hpp).
std::span<const SchemeParam> dgq_scheme_params();
// DgqV1Params from the parsed parameters, validated (DgqV1Params::validate's ParameterError).
DgqV1Params dgq_v1_params_from_args(const SchemeArgs& args);
// The canonical spec "dgq:win=16,group_ratio=0.75,..." of p, which every backend's spec() gives.
std::string dgq_spec_of(const DgqV1Params& p);
// Scheme::planned_bytes of every backend: the upper bound, every tensor using its full segment
// budget (rule 4) (DGQ's stored size depends on the data).
std::uint64_t dgq_planned_bytes(std::int64_t tokens, std::int64_t channels, const DgqV1Params& p);

// The parameters of a "dgq[:key=value,...]" spec, read exactly as make_scheme reads it: the
// same defaults, ranges, validation and ParameterError messages. Throws ParameterError for a
// spec of another family too.
DgqV1Params dgq_v1_params_from_spec(std::string_view spec);

// Appends "codes" (a copy of enc.codes), "ranges" and the marker part of enc.params.markers.
void append_dgq_parts(const DgqV1Encoded& enc, Compressed& c);
// The same with the codes already written as bytes (moved into their part, no copy);
// enc.codes is ignored. codes must hold enc.tokens*enc.channels bytes.
void append_dgq_parts(const DgqV1Encoded& enc, std::vector<std::uint8_t> codes, Compressed& c);

// Everything of c's parts but the codes, checked, and the codes where they lie: decoders read
// them from c's "codes" part without a copy (valid while c is alive and unchanged).
struct DgqPartsView {
  DgqV1Encoded header;  // codes left empty
  const std::int8_t* codes = nullptr;
};

// Reads c's parts under params p (c.tokens, c.channels and c.dtype give the shape). Checks, in
// this order, and throws InputError "<c.scheme>: ..." naming the part and its size: a negative
// shape; "codes" missing or not tokens*channels bytes; "ranges" missing or not a whole number of
// segments in [1, segment budget] ([0, 0] for an empty tensor); "boundaries" (table) missing or
// not segments-1 uint32; "bitmap" (bitmap) missing or not ceil(tokens/8) bytes. The marker
// contents are checked by the decoder (dgq_decode).
DgqPartsView view_dgq_parts(const Compressed& c, const DgqV1Params& p);

// view_dgq_parts with the codes copied into the result's codes.
DgqV1Encoded dgq_encoded_from_parts(const Compressed& c, const DgqV1Params& p);

}  // namespace dgq

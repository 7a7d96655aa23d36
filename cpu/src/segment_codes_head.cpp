// DGQ v1's stored head as decode attention reads it (layout segment_codes, format dgq): the codes where they lie and
// each segment's (segment-channel: each segment and channel's) lo and scale, from the scheme's
// parts (dgq/dgq_parts.hpp), read once per head when the cache is set up, not at every step;
// with the rotation modifier (rot=hadamard) the same parts in the rotated basis.
#include <stdexcept>
#include <string>

#include "decode_attention_spec.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/registry.hpp"
#include "dgq/stored_layout.hpp"

namespace dgq::cpu {

SpanRanges dgq_segment_ranges(const Compressed& c, const std::uint8_t** codes) {
  const ParsedSpec spec = parse_spec(c.scheme);
  if (spec.family->stored_layout != StoredLayout::segment_codes) {
    throw std::invalid_argument("decode_attention: format dgq reads the parts of a dgq scheme, not '" + c.scheme + "'");
  }
  refuse_modifiers_but_rotation(spec, c.scheme);
  const bool rotated = spec.modifier("rot") == "hadamard";
  const DgqV1Params p = dgq_v1_params_from_args(spec.args);
  if (c.dtype != DType::f16 && c.dtype != DType::f32) {
    throw std::invalid_argument("decode_attention: format dgq takes fp16 or fp32 input, not " +
                                std::string(dtype_name(c.dtype)));
  }
  // A copy of the codes: in-band markers are found in them (rule 8); the kernel reads c's own.
  const DgqV1Encoded enc = dgq_encoded_from_parts(c, p);
  SpanRanges r;
  r.rotated = rotated;
  r.edges = dgq_segment_edges(enc);
  r.f16 = c.dtype == DType::f16;
  r.channels = p.granularity == Granularity::segment_channel ? static_cast<int>(c.channels) : 1;
  for (std::size_t i = 0; i < enc.lo.size(); ++i) {  // [segment][channels], as rule 7 reads them
    r.lo.push_back(enc.lo[i]);
    r.scale.push_back(rules::dequant_scale(enc.lo[i], enc.hi[i]));
  }
  *codes = c.find("codes")->bytes.data();
  return r;
}

}  // namespace dgq::cpu

// DGQ v1's stored head as decode attention reads it (format dgq): the codes where they lie and
// each segment's (segment-channel: each segment and channel's) lo and scale, from the scheme's
// parts (dgq/dgq_parts.hpp), read once per head when the cache is set up, not at every step;
// with the rotation modifier (rot=hadamard) the same parts in the rotated basis.
#include <stdexcept>
#include <string>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::cpu {

namespace {

// The spec without the rotation modifier's key, which make_scheme appends last to the inner
// spec (docs/spec.md, "Scheme modifier: Hadamard rotation"); rotated says whether it was there.
std::string without_rotation(const std::string& spec, bool& rotated) {
  for (const char* suffix : {",rot=hadamard", ":rot=hadamard"}) {
    const std::string s(suffix);
    if (spec.size() > s.size() && spec.compare(spec.size() - s.size(), s.size(), s) == 0) {
      rotated = true;
      return spec.substr(0, spec.size() - s.size());
    }
  }
  rotated = false;
  return spec;
}

}  // namespace

DgqSegmentRanges dgq_segment_ranges(const Compressed& c, const std::uint8_t** codes) {
  if (c.scheme.rfind("dgq:", 0) != 0 && c.scheme != "dgq") {
    throw std::invalid_argument("decode_attention: format dgq reads the parts of a dgq scheme, not '" + c.scheme + "'");
  }
  bool rotated = false;
  const DgqV1Params p = dgq_v1_params_from_spec(without_rotation(c.scheme, rotated));
  if (c.dtype != DType::f16 && c.dtype != DType::f32) {
    throw std::invalid_argument("decode_attention: format dgq takes fp16 or fp32 input, not " + std::string(dtype_name(c.dtype)));
  }
  // A copy of the codes: in-band markers are found in them (rule 8); the kernel reads c's own.
  const DgqV1Encoded enc = dgq_encoded_from_parts(c, p);
  DgqSegmentRanges r;
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

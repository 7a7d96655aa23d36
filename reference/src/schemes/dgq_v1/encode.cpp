// dgq_encode: rules 0-8 in two passes over the input (pass 1: statistics and block extremes;
// pass 2: codes).
#include "pipeline.hpp"
#include "shape.hpp"

namespace dgq {
namespace detail {

std::vector<std::uint32_t> encode_parts(const kernels::CpuKernels& k, ConstTensor x, const DgqV1Params& p,
                                        DgqV1Encoded& enc, std::int8_t* codes) {
  p.validate();
  check_shape(x);
  enc.tokens = x.tokens;
  enc.channels = x.channels;
  enc.dtype = x.dtype;
  enc.params = p;
  enc.segments = 0;
  enc.boundaries.clear();
  enc.bitmap.clear();
  enc.lo.clear();
  enc.hi.clear();
  if (x.tokens == 0) return with_ends({}, 0);  // rule 4: no segment, no codes

  const PassOne pass = scan_tensor(k, x, p);
  const DgqAnalysis analysis = analyze_pass(pass, x.tokens, p);
  std::vector<std::uint32_t> edges = with_ends(analysis.edges, x.tokens);
  enc.segments = static_cast<int>(edges.size()) - 1;
  segment_ranges(pass, edges, p.win, enc);
  quantize_segments(k, x, edges, enc, codes);
  store_markers(edges, enc, codes);
  return edges;
}

}  // namespace detail

void dgq_encode_into(ConstTensor x, const DgqV1Params& p, DgqV1Encoded& out) {
  // The codes are sized only for a valid shape; resize keeps the old bytes, all of which pass 2
  // overwrites, so a reused buffer costs no zero-fill and no page faults.
  p.validate();
  detail::check_shape(x);
  out.codes.resize(static_cast<std::size_t>(x.tokens * x.channels));
  detail::encode_parts(kernels::kernels_for(Device::cpu), x, p, out, out.codes.data());
}

DgqV1Encoded dgq_encode(ConstTensor x, const DgqV1Params& p) {
  DgqV1Encoded enc;
  dgq_encode_into(x, p, enc);
  return enc;
}

}  // namespace dgq

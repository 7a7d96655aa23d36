// dgq_encode: rules 0-8 in two passes over the input (pass 1: statistics and block extremes;
// pass 2: codes).
#include "pipeline.hpp"
#include "shape.hpp"

namespace dgq {

DgqEncoded dgq_encode(ConstTensor x, const DgqParams& p) {
  p.validate();
  detail::check_shape(x);
  DgqEncoded enc;
  enc.tokens = x.tokens;
  enc.channels = x.channels;
  enc.dtype = x.dtype;
  enc.params = p;
  if (x.tokens == 0) return enc;  // rule 4: no segment, no codes

  const detail::PassOne pass = detail::scan_tensor(x, p);
  const DgqAnalysis analysis = detail::analyze_pass(pass, x.tokens, p);
  const std::vector<std::uint32_t> edges = detail::with_ends(analysis.edges, x.tokens);
  enc.segments = static_cast<int>(edges.size()) - 1;
  detail::segment_ranges(pass, edges, p.win, enc);
  detail::quantize_segments(x, edges, enc);
  detail::store_markers(edges, enc);
  return enc;
}

}  // namespace dgq

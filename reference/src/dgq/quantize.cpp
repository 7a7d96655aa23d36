// Rule 7: the second pass, codes of every segment.
#include "pipeline.hpp"

namespace dgq::detail {

void quantize_segments(ConstTensor x, const std::vector<std::uint32_t>& edges, DgqEncoded& enc) {
  const std::int64_t D = x.channels;
  const std::size_t row_bytes = static_cast<std::size_t>(D) * dtype_size(x.dtype);
  enc.codes.resize(static_cast<std::size_t>(x.tokens * D));
  std::vector<float> lo, inv;
  for (int s = 0; s + 1 < static_cast<int>(edges.size()); ++s) {
    segment_row_params(enc, s, lo, inv, /*inverse=*/true);
    for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t) {
      const void* row = static_cast<const unsigned char*>(x.data) + static_cast<std::size_t>(t) * row_bytes;
      kernels::fast::quantize_row(row, x.dtype, D, lo.data(), inv.data(), enc.codes.data() + t * D);
    }
  }
}

}  // namespace dgq::detail

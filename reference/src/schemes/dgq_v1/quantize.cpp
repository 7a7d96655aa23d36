// Rule 7: the second pass, codes of every segment.
#include "pipeline.hpp"

namespace dgq::detail {

void quantize_segments(const kernels::CpuKernels& k, ConstTensor x, const std::vector<std::uint32_t>& edges,
                       const DgqV1Encoded& enc, std::int8_t* codes) {
  const std::int64_t D = x.channels;
  const std::size_t row_bytes = static_cast<std::size_t>(D) * dtype_size(x.dtype);
  std::vector<float> lo, inv;
  for (int s = 0; s + 1 < static_cast<int>(edges.size()); ++s) {
    segment_row_params(enc, s, lo, inv, /*inverse=*/true);
    const std::int64_t first = edges[s];
    const void* rows = static_cast<const unsigned char*>(x.data) + static_cast<std::size_t>(first) * row_bytes;
    k.quantize_rows(rows, x.dtype, edges[s + 1] - first, D, lo.data(), inv.data(), codes + first * D);
  }
}

}  // namespace dgq::detail

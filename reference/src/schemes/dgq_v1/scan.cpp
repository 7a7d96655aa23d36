// Pass 1 (rules 0, 1 and the block extremes used by rule 6): one read of the tensor.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/non_finite_name.hpp"
#include "pipeline.hpp"

namespace dgq::kernels {
using detail::token_variance;
namespace {

// Rule 0's error: the first non-finite element of row t, named by token and channel.
[[noreturn]] void reject_row(const float* row, std::int64_t channels, std::int64_t t) {
  for (std::int64_t d = 0; d < channels; ++d) {
    if (!std::isfinite(row[d])) {
      throw InputError("non-finite value " + std::string(non_finite_name(row[d])) + " at token " + std::to_string(t) +
                       ", channel " + std::to_string(d));
    }
  }
  throw InputError("non-finite value at token " + std::to_string(t));
}

const void* row_pointer(ConstTensor x, std::int64_t t) {
  return static_cast<const unsigned char*>(x.data) + static_cast<std::size_t>(t * x.channels) * dtype_size(x.dtype);
}

}  // namespace

PassOne scan_tensor(const CpuKernels& k, ConstTensor x, const DgqV1Params& p) {
  const std::int64_t L = x.tokens, D = x.channels;
  const std::int64_t blocks = (L + p.win - 1) / p.win;
  PassOne out;
  out.range_channels = p.granularity == Granularity::segment_channel ? D : 1;
  out.token_var.resize(static_cast<std::size_t>(L));
  out.block_lo.resize(static_cast<std::size_t>(blocks * out.range_channels));
  out.block_hi.resize(out.block_lo.size());

  const auto shape = out.range_channels == 1 ? RangeShape::whole_row : RangeShape::per_channel;
  std::vector<float> row(static_cast<std::size_t>(D));
  std::vector<RowStats> stats(static_cast<std::size_t>(std::min<std::int64_t>(L, p.win)));
  for (std::int64_t b = 0; b < blocks; ++b) {
    // The block's extremes are accumulated in place, starting from +-inf.
    float* lo = out.block_lo.data() + b * out.range_channels;
    float* hi = out.block_hi.data() + b * out.range_channels;
    std::fill(lo, lo + out.range_channels, std::numeric_limits<float>::infinity());
    std::fill(hi, hi + out.range_channels, -std::numeric_limits<float>::infinity());
    const std::int64_t first = b * p.win, rows = std::min(L, first + p.win) - first;
    const std::int64_t scanned =
        k.scan_rows(row_pointer(x, first), x.dtype, rows, D, row.data(), lo, hi, shape, stats.data());
    // Rows before a non-finite one are judged first, as a row-by-row scan would.
    for (std::int64_t r = 0; r < scanned; ++r)
      out.token_var[static_cast<std::size_t>(first + r)] = token_variance(stats[r], D, p.min_var, first + r);
    if (scanned < rows) reject_row(row.data(), D, first + scanned);
  }
  return out;
}

}  // namespace dgq::kernels

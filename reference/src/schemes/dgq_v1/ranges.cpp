// Rule 6: segment ranges from the block extremes of pass 1.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "pipeline.hpp"

namespace dgq::detail {
namespace {

[[noreturn]] void reject_range(int s, const std::vector<std::uint32_t>& edges, std::int64_t channel, float lo,
                               float hi) {
  std::ostringstream msg;
  msg << "value range of segment " << s << " (tokens " << edges[s] << ".." << edges[s + 1] - 1;
  if (channel >= 0) msg << ", channel " << channel;
  msg << ") overflows fp32: hi - lo = " << hi << " - (" << lo << ")";
  throw InputError(msg.str());
}

}  // namespace

void segment_ranges(const PassOne& pass, const std::vector<std::uint32_t>& edges, int win, DgqV1Encoded& enc) {
  const std::int64_t C = pass.range_channels;
  const int segments = static_cast<int>(edges.size()) - 1;
  const bool per_channel = enc.params.granularity == Granularity::segment_channel;
  enc.lo.assign(static_cast<std::size_t>(segments * C), 0.0f);
  enc.hi.assign(enc.lo.size(), 0.0f);
  for (int s = 0; s < segments; ++s) {
    const std::int64_t first_block = edges[s] / win;
    const std::int64_t end_block = (static_cast<std::int64_t>(edges[s + 1]) + win - 1) / win;
    // Plain loops: min/max are exact and order-free, and Eigen's AVX-512 min/max trips a
    // GCC 12 false -Wmaybe-uninitialized.
    float* lo = enc.lo.data() + s * C;
    float* hi = enc.hi.data() + s * C;
    std::copy_n(pass.block_lo.data() + first_block * C, C, lo);
    std::copy_n(pass.block_hi.data() + first_block * C, C, hi);
    for (std::int64_t b = first_block + 1; b < end_block; ++b) {
      const float* block_lo = pass.block_lo.data() + b * C;
      const float* block_hi = pass.block_hi.data() + b * C;
      for (std::int64_t c = 0; c < C; ++c) {
        lo[c] = std::fmin(lo[c], block_lo[c]);
        hi[c] = std::fmax(hi[c], block_hi[c]);
      }
    }
    for (std::int64_t c = 0; c < C; ++c) {
      lo[c] = rules::canonical_zero(lo[c]);
      hi[c] = rules::canonical_zero(hi[c]);
      if (!std::isfinite(hi[c] - lo[c])) reject_range(s, edges, per_channel ? c : -1, lo[c], hi[c]);
    }
  }
}

void segment_row_params(const DgqV1Encoded& enc, int s, std::vector<float>& lo, std::vector<float>& step,
                        bool inverse) {
  const std::int64_t D = enc.channels;
  const bool per_channel = enc.params.granularity == Granularity::segment_channel;
  lo.resize(static_cast<std::size_t>(D));
  step.resize(lo.size());
  for (std::int64_t d = 0; d < D; ++d) {
    const std::size_t i = static_cast<std::size_t>(s * (per_channel ? D : 1) + (per_channel ? d : 0));
    lo[d] = enc.lo[i];
    step[d] = inverse ? rules::code_inverse_step(enc.lo[i], enc.hi[i]) : rules::dequant_scale(enc.lo[i], enc.hi[i]);
  }
}

}  // namespace dgq::detail

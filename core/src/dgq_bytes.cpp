// Rule 9: exact bytes stored per part. Per-tensor metadata (shape, dtype, params, segment
// count, about 16 bytes) is not counted.
#include "dgq/dgq_v1_params.hpp"

namespace dgq {

DgqV1Encoded::Bytes DgqV1Encoded::stored_bytes() const {
  Bytes b;
  const std::uint64_t C = params.granularity == Granularity::segment_channel ? static_cast<std::uint64_t>(channels) : 1;
  const std::uint64_t S = static_cast<std::uint64_t>(segments);
  b.codes = static_cast<std::uint64_t>(tokens) * static_cast<std::uint64_t>(channels);
  b.ranges = 2 * sizeof(float) * S * C;
  switch (params.markers) {
    case Markers::table: b.markers = S > 0 ? sizeof(std::uint32_t) * (S - 1) : 0; break;
    case Markers::bitmap: b.markers = (static_cast<std::uint64_t>(tokens) + 7) / 8; break;
    case Markers::inband: b.markers = 0; break;
  }
  return b;
}

}  // namespace dgq

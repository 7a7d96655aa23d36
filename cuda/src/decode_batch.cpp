// decode_batch: DgqV1Encoded in, host tensors out (bit for bit what dgq_decode writes).
// The stored parts are checked on the host first (sizes, boundary order, marker positions),
// then units of equal shape, dtype and layout decode in one launch sequence.
#include <cuda_runtime_api.h>

#include <string>
#include <tuple>

#include "cuda_check.hpp"
#include "decode_faults.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "unit_groups.hpp"

namespace dgq::cuda {
namespace {

using LayoutKey = std::tuple<int, std::int64_t, std::int64_t, int, int>;

std::int64_t range_channels(const DgqV1Encoded& e) {
  return e.params.granularity == Granularity::segment_channel ? e.channels : 1;
}

[[noreturn]] void corrupt(std::size_t index, const std::string& what) {
  throw InputError("unit " + std::to_string(index) + ": corrupt DGQ data: " + what);
}

// The checks and words of dgq_segment_edges (core/src/dgq_segment_edges.cpp), in its order.
void check_table(const DgqV1Encoded& e, std::size_t index) {
  for (std::size_t i = 0; i < e.boundaries.size(); ++i) {
    const std::uint32_t prev = i == 0 ? 0 : e.boundaries[i - 1];
    if (e.boundaries[i] <= prev || e.boundaries[i] >= e.tokens)
      corrupt(index, "boundary " + std::to_string(i) + " = " + std::to_string(e.boundaries[i]) +
                         " is not increasing inside (0, " + std::to_string(e.tokens) + ")");
  }
  const std::size_t segments = e.tokens > 0 ? e.boundaries.size() + 1 : 0;
  if (static_cast<std::int64_t>(segments) != e.segments)
    corrupt(index, "the stored markers give " + std::to_string(segments) + " segments, the header says " +
                       std::to_string(e.segments));
}

void check_encoded(const DgqV1Encoded& e, const MutTensor& out, std::size_t index) {
  if (out.tokens != e.tokens || out.channels != e.channels || out.dtype != e.dtype)
    throw InputError("unit " + std::to_string(index) + ": decode target is [" + std::to_string(out.tokens) + " x " +
                     std::to_string(out.channels) + "] " + std::string(dtype_name(out.dtype)) +
                     ", the encoded tensor is [" + std::to_string(e.tokens) + " x " + std::to_string(e.channels) +
                     "] " + std::string(dtype_name(e.dtype)));
  if (e.channels < 1 || e.channels > kMaxChannels)
    throw InputError("unit " + std::to_string(index) + ": channels=" + std::to_string(e.channels) +
                     " is out of range for the CUDA path: expected [1, " + std::to_string(kMaxChannels) + "]");
  if (e.tokens > 0 && out.data == nullptr) corrupt(index, "decode target has no data (null pointer)");
  if (e.segments < (e.tokens > 0 ? 1 : 0) || e.segments > kMaxSegments || (e.tokens == 0 && e.segments != 0))
    corrupt(index, "segments=" + std::to_string(e.segments) + " for " + std::to_string(e.tokens) + " tokens");
  if (e.codes.size() != static_cast<std::size_t>(e.tokens * e.channels))
    corrupt(index, "codes has " + std::to_string(e.codes.size()) +
                       " bytes, expected tokens*channels = " + std::to_string(e.tokens * e.channels));
  const std::size_t ranges = static_cast<std::size_t>(e.segments * range_channels(e));
  if (e.lo.size() != ranges || e.hi.size() != ranges) corrupt(index, "range count is not segments*C");
  switch (e.params.markers) {
    case Markers::table: check_table(e, index); break;
    case Markers::bitmap:
      if (e.bitmap.size() != static_cast<std::size_t>((e.tokens + 7) / 8))
        corrupt(index, "bitmap has " + std::to_string(e.bitmap.size()) +
                           " bytes, expected ceil(tokens/8) = " + std::to_string((e.tokens + 7) / 8));
      if (e.tokens > 0 && (e.bitmap[0] & 1u)) corrupt(index, "bitmap bit of token 0 is 1 (segment 0 has parity 0)");
      break;
    case Markers::inband:
      if (e.tokens > 0 && rules::is_inband_marker(e.codes[0]))
        corrupt(index, "in-band marker at token 0 (segment 0 has none)");
      break;
  }
}

template <class T>
void upload(DeviceBuffer& buffer, std::size_t offset_items, const T* data, std::size_t count) {
  if (count == 0) return;
  check_cuda(cudaMemcpy(buffer.as<T>() + offset_items, data, count * sizeof(T), cudaMemcpyHostToDevice),
             "cudaMemcpy(encoded parts)");
}

void decode_group(const std::vector<DgqV1Encoded>& encoded, const std::vector<MutTensor>& out,
                  const std::vector<std::size_t>& members) {
  const DgqV1Encoded& first = encoded[members.front()];
  DeviceEncoded dev;
  dev.shape = {static_cast<std::int64_t>(members.size()), first.tokens, first.channels, first.dtype};
  dev.params = first.params;
  const DeviceShape& s = dev.shape;
  if (s.elements() == 0) return;
  const std::int64_t C = dev.range_channels();
  const std::size_t per_unit = static_cast<std::size_t>(s.tokens * s.channels);
  const std::size_t slots = static_cast<std::size_t>(kMaxSegments * C);
  const std::size_t bitmap_bytes = static_cast<std::size_t>(dev.bitmap_bytes_per_unit());
  dev.codes.reserve(per_unit * members.size());
  dev.lo.reserve(slots * members.size() * sizeof(float));
  dev.hi.reserve(slots * members.size() * sizeof(float));
  dev.edges.reserve(members.size() * (kMaxSegments + 1) * sizeof(std::uint32_t));
  dev.segments.reserve(members.size() * sizeof(int));
  dev.bitmap.reserve(bitmap_bytes * members.size());

  for (std::size_t i = 0; i < members.size(); ++i) {
    const DgqV1Encoded& e = encoded[members[i]];
    upload(dev.codes, i * per_unit, e.codes.data(), e.codes.size());
    upload(dev.lo, i * slots, e.lo.data(), e.lo.size());
    upload(dev.hi, i * slots, e.hi.data(), e.hi.size());
    upload(dev.segments, i, &e.segments, 1);
    if (e.params.markers == Markers::table) {
      std::vector<std::uint32_t> edges{0};
      edges.insert(edges.end(), e.boundaries.begin(), e.boundaries.end());
      edges.push_back(static_cast<std::uint32_t>(e.tokens));
      upload(dev.edges, i * (kMaxSegments + 1), edges.data(), edges.size());
    }
    if (e.params.markers == Markers::bitmap) upload(dev.bitmap, i * bitmap_bytes, e.bitmap.data(), e.bitmap.size());
  }

  DeviceBuffer output;
  const std::size_t unit_bytes = out[members.front()].bytes();
  output.reserve(unit_bytes * members.size());
  decode_device(dev, output.get());
  const DecodeFault bad = read_decode_fault(dev, nullptr);
  if (bad.unit >= 0)
    throw InputError(describe(bad, static_cast<std::int64_t>(members[static_cast<std::size_t>(bad.unit)])));
  for (std::size_t i = 0; i < members.size(); ++i) {
    check_cuda(cudaMemcpy(out[members[i]].data, output.as<unsigned char>() + i * unit_bytes, unit_bytes,
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy(decoded)");
  }
}

}  // namespace

void decode_batch(const std::vector<DgqV1Encoded>& encoded, const std::vector<MutTensor>& out) {
  if (encoded.size() != out.size())
    throw InputError("decode_batch: " + std::to_string(encoded.size()) + " encoded units but " +
                     std::to_string(out.size()) + " outputs");
  for (std::size_t i = 0; i < encoded.size(); ++i) check_encoded(encoded[i], out[i], i);
  const auto groups = group_indices<LayoutKey>(encoded, [](const DgqV1Encoded& e) {
    return LayoutKey{static_cast<int>(e.dtype), e.tokens, e.channels, static_cast<int>(e.params.markers),
                     static_cast<int>(e.params.granularity)};
  });
  for (const auto& members : groups) decode_group(encoded, out, members);
}

}  // namespace dgq::cuda

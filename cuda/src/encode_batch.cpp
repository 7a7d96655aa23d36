// encode_batch: host tensors in, DgqV1Encoded out (byte for byte what dgq_encode returns).
// Units of equal shape and dtype share one device buffer and one launch sequence.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>

#include "cuda_check.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/errors.hpp"
#include "encode_faults.hpp"
#include "unit_groups.hpp"

namespace dgq::cuda {
namespace {

using ShapeKey = std::tuple<int, std::int64_t, std::int64_t>;

void check_unit(const ConstTensor& x, std::size_t index) {
  const std::string where = "unit " + std::to_string(index) + ": ";
  if (x.tokens < 0 || x.tokens > static_cast<std::int64_t>(UINT32_MAX))
    throw InputError(where + "tokens=" + std::to_string(x.tokens) + " is out of range: expected [0, 4294967295]");
  if (x.channels < 1 || x.channels > kMaxChannels)
    throw InputError(where + "channels=" + std::to_string(x.channels) +
                     " is out of range for the CUDA path: expected [1, " + std::to_string(kMaxChannels) + "]");
  if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32)
    throw InputError(where + "unknown dtype code " + std::to_string(static_cast<int>(x.dtype)));
  if (x.tokens > 0 && x.data == nullptr) throw InputError(where + "tensor data is missing (null pointer)");
}

// The first failure of the batch in dgq_encode_batch's terms: the lowest unit index.
struct FirstFault {
  std::size_t unit = SIZE_MAX;
  std::string message;
  void offer(std::size_t index, const std::string& text) {
    if (index < unit) {
      unit = index;
      message = text;
    }
  }
};

template <class T>
std::vector<T> download(const DeviceBuffer& buffer, std::size_t count, const char* what) {
  std::vector<T> host(count);
  if (count > 0) check_cuda(cudaMemcpy(host.data(), buffer.get(), count * sizeof(T), cudaMemcpyDeviceToHost), what);
  return host;
}

// Rule 8's parts of one unit, as dgq_encode stores them.
void store_markers(const std::vector<std::uint32_t>& edges, int segments, const std::uint8_t* bitmap,
                   std::int64_t bitmap_bytes, DgqV1Encoded& enc) {
  if (enc.params.markers == Markers::table && segments > 1) {
    enc.boundaries.assign(edges.begin() + 1, edges.begin() + segments);
  }
  if (enc.params.markers == Markers::bitmap && enc.tokens > 0) {
    enc.bitmap.assign(bitmap, bitmap + bitmap_bytes);
  }
}

void encode_group(const std::vector<ConstTensor>& units, const std::vector<std::size_t>& members, const DgqV1Params& p,
                  std::vector<DgqV1Encoded>& results, FirstFault& first_fault) {
  const ConstTensor& first = units[members.front()];
  DeviceShape shape{static_cast<std::int64_t>(members.size()), first.tokens, first.channels, first.dtype};
  const std::size_t unit_bytes = first.bytes();
  DeviceBuffer input;
  input.reserve(unit_bytes * members.size());
  for (std::size_t i = 0; i < members.size() && unit_bytes > 0; ++i) {
    check_cuda(cudaMemcpy(input.as<unsigned char>() + i * unit_bytes, units[members[i]].data, unit_bytes,
                          cudaMemcpyHostToDevice),
               "cudaMemcpy(input)");
  }
  DeviceEncoded enc;
  encode_device(input.get(), shape, p, enc);
  const EncodeFault fault = read_encode_fault(enc, nullptr);
  if (fault.kind != EncodeFault::none) {
    const std::size_t index = members[static_cast<std::size_t>(fault.unit)];
    first_fault.offer(index, describe(fault, static_cast<std::int64_t>(index)));
    return;
  }

  const std::int64_t C = enc.range_channels();
  const std::int64_t per_unit = shape.tokens * shape.channels;
  const auto codes = download<std::int8_t>(enc.codes, static_cast<std::size_t>(shape.elements()), "cudaMemcpy(codes)");
  const auto lo = download<float>(enc.lo, static_cast<std::size_t>(shape.units * kMaxSegments * C), "cudaMemcpy(lo)");
  const auto hi = download<float>(enc.hi, lo.size(), "cudaMemcpy(hi)");
  const auto edges = download<std::uint32_t>(enc.edges, static_cast<std::size_t>(shape.units * (kMaxSegments + 1)),
                                             "cudaMemcpy(edges)");
  const auto segments = download<int>(enc.segments, static_cast<std::size_t>(shape.units), "cudaMemcpy(segments)");
  const std::int64_t bitmap_bytes = enc.bitmap_bytes_per_unit();
  const auto bitmap = p.markers == Markers::bitmap && shape.elements() > 0
                          ? download<std::uint8_t>(enc.bitmap, static_cast<std::size_t>(shape.units * bitmap_bytes),
                                                   "cudaMemcpy(bitmap)")
                          : std::vector<std::uint8_t>{};

  for (std::size_t i = 0; i < members.size(); ++i) {
    DgqV1Encoded& out = results[members[i]];
    out.tokens = shape.tokens;
    out.channels = shape.channels;
    out.dtype = shape.dtype;
    out.params = p;
    if (shape.tokens == 0) continue;
    out.segments = segments[i];
    const auto range_begin = static_cast<std::ptrdiff_t>(i * kMaxSegments * C);
    const auto range_end = range_begin + static_cast<std::ptrdiff_t>(out.segments * C);
    out.lo.assign(lo.begin() + range_begin, lo.begin() + range_end);
    out.hi.assign(hi.begin() + range_begin, hi.begin() + range_end);
    out.codes.assign(codes.begin() + static_cast<std::ptrdiff_t>(i * per_unit),
                     codes.begin() + static_cast<std::ptrdiff_t>((i + 1) * per_unit));
    const std::vector<std::uint32_t> unit_edges(
        edges.begin() + static_cast<std::ptrdiff_t>(i * (kMaxSegments + 1)),
        edges.begin() + static_cast<std::ptrdiff_t>((i + 1) * (kMaxSegments + 1)));
    store_markers(unit_edges, out.segments, bitmap.empty() ? nullptr : bitmap.data() + i * bitmap_bytes, bitmap_bytes,
                  out);
  }
}

}  // namespace

std::vector<DgqV1Encoded> encode_batch(const std::vector<ConstTensor>& units, const DgqV1Params& p) {
  check_cuda_params(p);
  for (std::size_t i = 0; i < units.size(); ++i) check_unit(units[i], i);
  std::vector<DgqV1Encoded> results(units.size());
  const auto groups = group_indices<ShapeKey>(units, [](const ConstTensor& x) {
    return ShapeKey{static_cast<int>(x.dtype), x.tokens, x.channels};
  });
  // Groups run in order of their first unit, so a fault in a later group may still belong to
  // a lower unit index: every slice that could hold a lower faulty unit is encoded.
  FirstFault first_fault;
  for (const auto& members : groups) {
    // channel_ranges puts units on grid.y (at most 65535): larger groups run in slices.
    for (std::size_t begin = 0; begin < members.size(); begin += kMaxUnitsPerLaunch) {
      if (members[begin] > first_fault.unit) break;
      const std::size_t end = std::min(members.size(), begin + kMaxUnitsPerLaunch);
      encode_group(units,
                   std::vector<std::size_t>(members.begin() + static_cast<std::ptrdiff_t>(begin),
                                            members.begin() + static_cast<std::ptrdiff_t>(end)),
                   p, results, first_fault);
    }
  }
  if (!first_fault.message.empty()) throw InputError(first_fault.message);
  return results;
}

}  // namespace dgq::cuda

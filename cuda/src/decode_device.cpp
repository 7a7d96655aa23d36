// decode_device: edges from the stored parts, scales, then one dequantize pass.
#include <cuda_runtime_api.h>

#include <string>

#include "cuda_check.hpp"
#include "decode_faults.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/errors.hpp"
#include "kernels/kernels.hpp"

namespace dgq::cuda {
namespace {

// decode_status layout: one error word (first unit whose markers disagree with its segment
// count, all-ones if none), then one marker counter per unit.
unsigned long long* error_word(const DeviceEncoded& enc) { return enc.decode_status.as<unsigned long long>(); }
int* marker_counts(const DeviceEncoded& enc) {
  return reinterpret_cast<int*>(enc.decode_status.as<unsigned char>() + sizeof(unsigned long long));
}

}  // namespace

void decode_device(const DeviceEncoded& enc, void* out, cudaStream_t stream) {
  const DeviceShape& s = enc.shape;
  if (s.elements() > 0 && out == nullptr) throw InputError("decode_device: output pointer is null");
  const std::int64_t range_slots = s.units * kMaxSegments * enc.range_channels();
  enc.decode_edges.reserve(static_cast<std::size_t>(s.units * (kMaxSegments + 1)) * sizeof(std::uint32_t));
  enc.decode_scale.reserve(static_cast<std::size_t>(range_slots) * sizeof(float));
  enc.decode_status.reserve(sizeof(unsigned long long) + static_cast<std::size_t>(s.units) * sizeof(int));
  check_cuda(cudaMemsetAsync(error_word(enc), 0xff, sizeof(unsigned long long), stream),
             "cudaMemsetAsync(decode status)");
  if (s.elements() == 0) return;
  auto* edges = enc.decode_edges.as<std::uint32_t>();
  const auto* segments = enc.segments.as<int>();
  detail::launch_recover_edges(enc.params.markers, s, enc.codes.as<std::int8_t>(), enc.bitmap.as<std::uint8_t>(),
                               enc.edges.as<std::uint32_t>(), segments, edges, marker_counts(enc), error_word(enc),
                               stream);
  detail::launch_decode_scales(enc.lo.as<float>(), enc.hi.as<float>(), s.units, enc.range_channels(),
                               enc.decode_scale.as<float>(), stream);
  detail::launch_dequantize(enc.codes.as<std::int8_t>(), s, edges, segments, enc.lo.as<float>(),
                            enc.decode_scale.as<float>(), enc.range_channels(), enc.params.markers == Markers::inband,
                            out, stream);
}

DecodeFault read_decode_fault(const DeviceEncoded& enc, cudaStream_t stream) {
  check_cuda(cudaStreamSynchronize(stream), "decode kernels");
  DecodeFault f;
  if (enc.shape.elements() == 0) return f;
  unsigned long long word = 0;
  check_cuda(cudaMemcpy(&word, error_word(enc), sizeof word, cudaMemcpyDeviceToHost), "cudaMemcpy(decode status)");
  if (word == detail::kNoIndex) return f;
  f.unit = static_cast<std::int64_t>(word);
  int markers = 0, header = 0;
  check_cuda(cudaMemcpy(&markers, marker_counts(enc) + f.unit, sizeof markers, cudaMemcpyDeviceToHost),
             "cudaMemcpy(marker count)");
  check_cuda(cudaMemcpy(&header, enc.segments.as<int>() + f.unit, sizeof header, cudaMemcpyDeviceToHost),
             "cudaMemcpy(segments)");
  f.marker_segments = static_cast<std::int64_t>(markers) + 1;  // interior edges + 1
  f.header_segments = header;
  return f;
}

std::string describe(const DecodeFault& f, std::int64_t unit_label) {
  return "unit " + std::to_string(unit_label) + ": corrupt DGQ data: the stored markers give " +
         std::to_string(f.marker_segments) + " segments, the header says " + std::to_string(f.header_segments);
}

void check_decode_status(const DeviceEncoded& enc, cudaStream_t stream) {
  const DecodeFault f = read_decode_fault(enc, stream);
  if (f.unit >= 0) throw InputError(describe(f, f.unit));
}

}  // namespace dgq::cuda

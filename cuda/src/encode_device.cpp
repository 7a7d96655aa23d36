// encode_device: the launch sequence of one batched encode (docs/cuda.md), and the status
// check that turns the kernels' fault words into the reference's errors.
#include <cuda_runtime_api.h>

#include <sstream>
#include <string>

#include "cuda_check.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/non_finite_name.hpp"
#include "encode_faults.hpp"
#include "kernels/kernels.hpp"

namespace dgq::cuda {

std::int64_t DeviceEncoded::range_channels() const {
  return params.granularity == Granularity::segment_channel ? shape.channels : 1;
}

namespace {

void check_device_shape(const DeviceShape& shape) {
  if (shape.units < 0 || shape.units > kMaxUnitsPerLaunch)
    throw InputError("units=" + std::to_string(shape.units) + " is out of range: expected [0, " +
                     std::to_string(kMaxUnitsPerLaunch) + "]");
  if (shape.tokens < 0 || shape.tokens > static_cast<std::int64_t>(UINT32_MAX))
    throw InputError("tokens=" + std::to_string(shape.tokens) + " is out of range: expected [0, 4294967295]");
  if (shape.channels < 1 || shape.channels > kMaxChannels)
    throw InputError("channels=" + std::to_string(shape.channels) +
                     " is out of range for the CUDA path: expected [1, " + std::to_string(kMaxChannels) + "]");
  if (shape.dtype != DType::f16 && shape.dtype != DType::bf16 && shape.dtype != DType::f32)
    throw InputError("unknown dtype code " + std::to_string(static_cast<int>(shape.dtype)));
}

std::size_t floats(std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); }

void reserve_buffers(DeviceEncoded& e) {
  const DeviceShape& s = e.shape;
  const std::int64_t blocks = (s.tokens + e.params.win - 1) / e.params.win;
  const std::int64_t range_slots = s.units * kMaxSegments * e.range_channels();
  e.codes.reserve(static_cast<std::size_t>(s.elements()));
  e.lo.reserve(floats(range_slots));
  e.hi.reserve(floats(range_slots));
  e.inv.reserve(floats(range_slots));
  e.edges.reserve(static_cast<std::size_t>(s.units * (kMaxSegments + 1)) * sizeof(std::uint32_t));
  e.segments.reserve(static_cast<std::size_t>(s.units) * sizeof(int));
  e.bitmap.reserve(static_cast<std::size_t>(s.units * e.bitmap_bytes_per_unit()));
  e.token_stats.reserve(3 * floats(s.units * s.tokens));
  e.block_stats.reserve(3 * floats(s.units * blocks));
  e.status.reserve(detail::kStatusWords * sizeof(unsigned long long));
}

}  // namespace

void check_cuda_params(const DgqV1Params& p) {
  p.validate();
  if (p.boundaries != Boundaries::adaptive) {
    throw ParameterError("dgq: boundaries=" + std::string(boundaries_name(p.boundaries)) +
                         " (docs/spec.md rule C3) has no CUDA implementation; run it on the CPU (Device::cpu)");
  }
}

void encode_device(const void* x, const DeviceShape& shape, const DgqV1Params& p, DeviceEncoded& out,
                   cudaStream_t stream) {
  check_cuda_params(p);
  check_device_shape(shape);
  if (shape.elements() > 0 && x == nullptr) throw InputError("encode_device: input pointer is null");
  out.shape = shape;
  out.params = p;
  out.input = x;
  reserve_buffers(out);
  auto* status = out.status.as<unsigned long long>();
  check_cuda(cudaMemsetAsync(status, 0xff, detail::kStatusWords * sizeof(unsigned long long), stream),
             "cudaMemsetAsync(status)");
  if (shape.units > 0) {
    check_cuda(cudaMemsetAsync(out.segments.get(), 0, static_cast<std::size_t>(shape.units) * sizeof(int), stream),
               "cudaMemsetAsync(segments)");
  }
  if (shape.elements() == 0) return;  // rule 4: L = 0 has no segment and no codes

  const std::int64_t tokens_total = shape.units * shape.tokens;
  const std::int64_t blocks_total = shape.units * ((shape.tokens + p.win - 1) / p.win);
  float* var = out.token_stats.as<float>();
  float* tmin = var + tokens_total;
  float* tmax = tmin + tokens_total;
  float* bmean = out.block_stats.as<float>();
  float* bmin = bmean + blocks_total;
  float* bmax = bmin + blocks_total;
  auto* edges = out.edges.as<std::uint32_t>();
  auto* segments = out.segments.as<int>();

  detail::launch_token_stats(x, shape, p.min_var, var, tmin, tmax, status, stream);
  detail::launch_block_stats(var, tmin, tmax, shape, p.win, bmean, bmin, bmax, stream);
  detail::launch_select_segments(bmean, bmin, bmax, shape, p, edges, segments, out.lo.as<float>(), out.hi.as<float>(),
                                 out.inv.as<float>(), status, stream);
  if (p.granularity == Granularity::segment_channel) {
    detail::launch_channel_ranges(x, shape, edges, segments, out.lo.as<float>(), out.hi.as<float>(),
                                  out.inv.as<float>(), status, stream);
  }
  detail::launch_quantize(x, shape, edges, segments, out.lo.as<float>(), out.inv.as<float>(), out.range_channels(),
                          p.markers == Markers::inband, out.codes.as<std::int8_t>(), stream);
  if (p.markers == Markers::bitmap)
    detail::launch_bitmap(shape, edges, segments, out.bitmap.as<std::uint8_t>(), stream);
}

namespace {

template <class T>
T fetch(const void* base, std::int64_t index, const char* what) {
  T v{};
  check_cuda(cudaMemcpy(&v, static_cast<const T*>(base) + index, sizeof v, cudaMemcpyDeviceToHost), what);
  return v;
}

// The input element as fp32, widened by the same rule as the reference (rule 0).
float fetch_element(const DeviceEncoded& enc, std::int64_t flat) {
  switch (enc.shape.dtype) {
    case DType::f16: return rules::half_to_float(fetch<std::uint16_t>(enc.input, flat, "cudaMemcpy(bad element)"));
    case DType::bf16: return rules::bf16_to_float(fetch<std::uint16_t>(enc.input, flat, "cudaMemcpy(bad element)"));
    case DType::f32: return fetch<float>(enc.input, flat, "cudaMemcpy(bad element)");
  }
  return 0.0f;
}

EncodeFault token_fault(const DeviceEncoded& enc, unsigned long long key) {
  const DeviceShape& s = enc.shape;
  const auto flat = static_cast<std::int64_t>(key / 2);
  EncodeFault f;
  f.kind = key % 2 == detail::kFaultNonFinite ? EncodeFault::non_finite : EncodeFault::variance_overflow;
  f.unit = flat / (s.tokens * s.channels);
  f.token = flat / s.channels % s.tokens;
  f.channel = flat % s.channels;
  if (f.kind == EncodeFault::non_finite) f.value = fetch_element(enc, flat);
  return f;
}

EncodeFault range_fault(const DeviceEncoded& enc, std::int64_t slot) {
  const std::int64_t C = enc.range_channels();
  EncodeFault f;
  f.kind = EncodeFault::range_overflow;
  f.unit = slot / (kMaxSegments * C);
  f.segment = static_cast<int>(slot / C % kMaxSegments);
  // Per-channel ranges name their channel even when there is one (D = 1), as the reference does.
  f.channel = enc.params.granularity == Granularity::segment_channel ? slot % C : -1;
  const std::int64_t edge = f.unit * (kMaxSegments + 1) + f.segment;
  f.first_token = fetch<std::uint32_t>(enc.edges.get(), edge, "cudaMemcpy(edges)");
  f.last_token = static_cast<std::int64_t>(fetch<std::uint32_t>(enc.edges.get(), edge + 1, "cudaMemcpy(edges)")) - 1;
  f.lo = fetch<float>(enc.lo.get(), slot, "cudaMemcpy(lo)");
  f.hi = fetch<float>(enc.hi.get(), slot, "cudaMemcpy(hi)");
  return f;
}

}  // namespace

EncodeFault read_encode_fault(const DeviceEncoded& enc, cudaStream_t stream) {
  check_cuda(cudaStreamSynchronize(stream), "encode kernels");
  unsigned long long words[detail::kStatusWords];
  check_cuda(cudaMemcpy(words, enc.status.get(), sizeof words, cudaMemcpyDeviceToHost), "cudaMemcpy(status)");
  const unsigned long long token_key = words[detail::kStatusTokenFault];
  const unsigned long long range_slot = words[detail::kStatusRangeOverflow];
  if (token_key == detail::kNoIndex && range_slot == detail::kNoIndex) return {};
  if (range_slot == detail::kNoIndex) return token_fault(enc, token_key);
  const EncodeFault range = range_fault(enc, static_cast<std::int64_t>(range_slot));
  if (token_key == detail::kNoIndex) return range;
  // Both kinds: the lower unit is reported; in the same unit the token fault (the reference
  // rejects the tokens before it computes ranges, which are then meaningless anyway).
  const EncodeFault token = token_fault(enc, token_key);
  return token.unit <= range.unit ? token : range;
}

std::string describe(const EncodeFault& f, std::int64_t unit_label) {
  std::ostringstream msg;
  msg << "unit " << unit_label << ": ";
  switch (f.kind) {
    case EncodeFault::none: msg << "no fault"; break;
    case EncodeFault::non_finite:
      msg << "non-finite value " << non_finite_name(f.value) << " at token " << f.token << ", channel " << f.channel;
      break;
    case EncodeFault::variance_overflow:
      msg << "variance of token " << f.token << " overflows fp32 (values too large)";
      break;
    case EncodeFault::range_overflow:
      msg << "value range of segment " << f.segment << " (tokens " << f.first_token << ".." << f.last_token;
      if (f.channel >= 0) msg << ", channel " << f.channel;
      msg << ") overflows fp32: hi - lo = " << f.hi << " - (" << f.lo << ")";
      break;
  }
  return msg.str();
}

void check_encode_status(const DeviceEncoded& enc, cudaStream_t stream) {
  const EncodeFault f = read_encode_fault(enc, stream);
  if (f.kind != EncodeFault::none) throw InputError(describe(f, f.unit));
}

}  // namespace dgq::cuda

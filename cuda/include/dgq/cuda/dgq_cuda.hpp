#pragma once
// The CUDA implementation of DGQ v1: same bytes as the CPU reference (docs/spec.md),
// differentially tested against it (tests/gpu). Design notes: docs/cuda.md.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/scheme.hpp"

namespace dgq::cuda {

// True when a CUDA device can be used; otherwise why (driver missing, no device, ...).
bool device_available(std::string* why = nullptr);

// The parameters the CUDA implementation runs: DgqV1Params::validate, then ParameterError for
// what it does not implement: boundaries=online (rule C3's first-come edges, the causal cache's;
// docs/spec.md) runs on the CPU only. Every encode entry point calls it first.
void check_cuda_params(const DgqV1Params& p);

// Host convenience calls, batched: every unit (layer x head x K/V) in one launch sequence.
// Throws dgq::Error with the CUDA error string on failure (no device, OOM, bad shape).
std::vector<DgqV1Encoded> encode_batch(const std::vector<ConstTensor>& units, const DgqV1Params& p);
void decode_batch(const std::vector<DgqV1Encoded>& encoded, const std::vector<MutTensor>& out);

// A Scheme whose DGQ compress/decompress run on the GPU ("dgq:..." specs only): the registry's
// make_scheme(spec, Device::cuda) (dgq/registry.hpp).
std::unique_ptr<Scheme> make_cuda_scheme(std::string_view spec);

// ---- Device-pointer entry points -------------------------------------------------------
// The CUDA kernels support 1..kMaxChannels channels and at most kMaxSegments segments
// (max_groups <= 8, docs/spec.md rule 4).
inline constexpr std::int64_t kMaxChannels = 256;
inline constexpr int kMaxSegments = 8;
inline constexpr std::int64_t kMaxUnitsPerLaunch = 65535;  // encode_device's units limit (grid.y)

// A batch of equally shaped units stored back to back in device memory:
// [units][tokens][channels] row-major, one dtype.
struct DeviceShape {
  std::int64_t units = 0, tokens = 0, channels = 0;
  DType dtype = DType::f16;
  std::int64_t elements() const { return units * tokens * channels; }
};

// Owning device allocation (cudaMalloc/cudaFree), grown on demand and never shrunk.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  void reserve(std::size_t bytes);  // throws dgq::Error (with cudaGetErrorString) on OOM
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t capacity() const { return capacity_; }

 private:
  void* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};

// What encode_device leaves in device memory for a batch. Per unit u:
//   codes    [units][tokens][channels] int8 (in-band markers applied in inband mode)
//   lo, hi   [units][kMaxSegments][C] fp32, C = 1 (segment) or channels (segment-channel)
//   edges    [units][kMaxSegments + 1] uint32: 0, interior edges..., tokens (segments+1 used)
//   segments [units] int32
//   bitmap   [units][ceil(tokens/8)] bytes (bitmap mode only)
// plus the scratch the kernels need, kept so repeated calls do not reallocate.
struct DeviceEncoded {
  DeviceShape shape;
  DgqV1Params params;
  // The input of the last encode_device: check_encode_status reads the first non-finite
  // element back from it to name its value, so it must still be valid until that check.
  const void* input = nullptr;
  DeviceBuffer codes, lo, hi, edges, segments, bitmap;
  DeviceBuffer token_stats, block_stats, inv, status;              // encode scratch
  mutable DeviceBuffer decode_edges, decode_scale, decode_status;  // decode scratch

  std::int64_t range_channels() const;  // C
  std::int64_t bitmap_bytes_per_unit() const { return (shape.tokens + 7) / 8; }
};

// Queues the whole encode on `stream` (no host synchronisation). Throws ParameterError /
// InputError for bad parameters or shapes before launching anything.
void encode_device(const void* x, const DeviceShape& shape, const DgqV1Params& p, DeviceEncoded& out,
                   cudaStream_t stream = nullptr);
// Synchronises `stream` and throws InputError when a unit's input held NaN/Inf or a variance or
// a segment's range overflowed fp32: the lowest such unit, prefixed "unit u: ", in the
// reference's words (dgq_encode_batch's message for the same batch).
void check_encode_status(const DeviceEncoded& enc, cudaStream_t stream = nullptr);

// Decodes enc into out ([units][tokens][channels] of enc.shape.dtype, device memory). The
// segment edges come from the stored parts only: boundaries (table), bitmap, or in-band markers.
// Queued on `stream`; check_decode_status synchronises and reports corrupt markers.
void decode_device(const DeviceEncoded& enc, void* out, cudaStream_t stream = nullptr);
void check_decode_status(const DeviceEncoded& enc, cudaStream_t stream = nullptr);

}  // namespace dgq::cuda

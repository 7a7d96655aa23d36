// Rule 7's dequantize on the GPU (rule 8: the in-band marker at a segment's first token, channel 0,
// decodes as 126 / -127): a thread
// takes 16 codes with one 16-byte load and writes 16 values rounded to the dtype with 16-byte
// stores (2 for fp16/bf16, 4 for fp32). One read of the codes, one write of the output.
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "element_walk.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kThreads = 256;

// The fast form, as in quantize.cu: one position per chunk; the element rule is the same.
template <class S, DType T>
__device__ __forceinline__ void dequantize_row_chunk(const std::int8_t* __restrict__ codes, const ElementWalkArgs& a,
                                                     std::int64_t chunk, const std::uint32_t* __restrict__ edges,
                                                     const int* __restrict__ segments, const float* __restrict__ lo,
                                                     const float* __restrict__ scale, S* __restrict__ out) {
  const std::int64_t first = chunk * 16;
  Codes16 in;
  in.word = *reinterpret_cast<const uint4*>(codes + first);
  const RowChunk at(chunk, a.tokens, a.channels, edges, segments);
  if (a.inband && at.starts_with_inband_marker()) in.codes[0] = rules::inband_unmark(in.codes[0]);
  const std::int64_t base = at.range_base(a.range_channels);
  Chunk16<S> values;
  if (a.range_channels == 1) {
    const float l = lo[base], s = scale[base];
#pragma unroll
    for (int i = 0; i < 16; ++i) values.elements[i] = Storage<T>::store(rules::dequantize_code(in.codes[i], l, s));
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      values.elements[i] = Storage<T>::store(rules::dequantize_code(in.codes[i], lo[base + i], scale[base + i]));
    }
  }
  uint4* dst = reinterpret_cast<uint4*>(out + first);
#pragma unroll
  for (int k = 0; k < static_cast<int>(sizeof(S)); ++k) dst[k] = values.words[k];
}

__global__ void decode_scales_kernel(const float* __restrict__ lo, const float* __restrict__ hi, std::int64_t slots,
                                     float* __restrict__ scale) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < slots) scale[i] = rules::dequant_scale(lo[i], hi[i]);
}

template <DType T>
__global__ void dequantize_kernel(const std::int8_t* __restrict__ codes, ElementWalkArgs a,
                                  const std::uint32_t* __restrict__ edges, const int* __restrict__ segments,
                                  const float* __restrict__ lo, const float* __restrict__ scale,
                                  typename Storage<T>::type* __restrict__ out) {
  using S = typename Storage<T>::type;
  const std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t first = chunk * 16;
  if (first >= a.elements) return;
  if (a.row_chunks) return dequantize_row_chunk<S, T>(codes, a, chunk, edges, segments, lo, scale, out);
  const int count = a.elements - first < 16 ? static_cast<int>(a.elements - first) : 16;
  const bool whole = a.vectorized && count == 16;

  Codes16 in;
  if (whole) {
    in.word = *reinterpret_cast<const uint4*>(codes + first);
  } else {
    for (int i = 0; i < count; ++i) in.codes[i] = codes[first + i];
  }

  Chunk16<S> values;
  ElementWalk at(first, a.tokens, a.channels, edges, segments);
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    if (i < count) {
      const std::int64_t slot = at.range_slot(a.range_channels);
      const std::int8_t code = a.inband && at.at_inband_marker() ? rules::inband_unmark(in.codes[i]) : in.codes[i];
      values.elements[i] = Storage<T>::store(rules::dequantize_code(code, lo[slot], scale[slot]));
      at.advance(i + 1 < count);
    } else {
      values.elements[i] = S{};
    }
  }

  if (whole) {
    uint4* dst = reinterpret_cast<uint4*>(out + first);
#pragma unroll
    for (int k = 0; k < static_cast<int>(sizeof(S)); ++k) dst[k] = values.words[k];
  } else {
    for (int i = 0; i < count; ++i) out[first + i] = values.elements[i];
  }
}

template <DType T>
void launch_typed(const std::int8_t* codes, const ElementWalkArgs& a, const std::uint32_t* edges, const int* segments,
                  const float* lo, const float* scale, void* out, cudaStream_t stream) {
  dequantize_kernel<T><<<grid_for((a.elements + 15) / 16, kThreads), kThreads, 0, stream>>>(
      codes, a, edges, segments, lo, scale, static_cast<typename Storage<T>::type*>(out));
  check_launch("dequantize_kernel");
}

}  // namespace

void launch_decode_scales(const float* lo, const float* hi, std::int64_t units, std::int64_t range_channels,
                          float* scale, cudaStream_t stream) {
  const std::int64_t slots = units * kMaxSegments * range_channels;
  if (slots == 0) return;
  decode_scales_kernel<<<grid_for(slots, kThreads), kThreads, 0, stream>>>(lo, hi, slots, scale);
  check_launch("decode_scales_kernel");
}

void launch_dequantize(const std::int8_t* codes, const DeviceShape& shape, const std::uint32_t* edges,
                       const int* segments, const float* lo, const float* scale, std::int64_t range_channels,
                       bool inband, void* out, cudaStream_t stream) {
  const ElementWalkArgs a = element_walk_args(shape, range_channels, inband, codes, out);
  if (a.elements == 0) return;
  switch (shape.dtype) {
    case DType::f16: return launch_typed<DType::f16>(codes, a, edges, segments, lo, scale, out, stream);
    case DType::bf16: return launch_typed<DType::bf16>(codes, a, edges, segments, lo, scale, out, stream);
    case DType::f32: return launch_typed<DType::f32>(codes, a, edges, segments, lo, scale, out, stream);
  }
}

}  // namespace dgq::cuda::detail

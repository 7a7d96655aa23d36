// Rule 7 (and rule 8's in-band markers) on the GPU: a thread quantizes 16 consecutive
// elements of the flat batch: 16-byte loads of the input (2 for fp16/bf16, 4 for fp32) and
// one 16-byte store of codes. Chunks start at multiples of 16 elements, so with 16-byte aligned
// base pointers every vector access is aligned whatever D is; the ragged tail and unaligned
// bases take the scalar path. This is the tensor's second read and only write.
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "element_walk.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kThreads = 256;

// The fast form: one position per chunk, the range read once per segment (or 16 consecutive
// per-channel ranges). The element rule is the same rules::quantize_code.
template <class S, DType T>
__device__ __forceinline__ void quantize_row_chunk(const S* __restrict__ x, const ElementWalkArgs& a,
                                                   std::int64_t chunk, const std::uint32_t* __restrict__ edges,
                                                   const int* __restrict__ segments, const float* __restrict__ lo,
                                                   const float* __restrict__ inv, std::int8_t* __restrict__ codes) {
  const std::int64_t first = chunk * 16;
  Chunk16<S> in;
  const uint4* src = reinterpret_cast<const uint4*>(x + first);
#pragma unroll
  for (int k = 0; k < static_cast<int>(sizeof(S)); ++k) in.words[k] = src[k];
  const RowChunk at(chunk, a.tokens, a.channels, edges, segments);
  const std::int64_t base = at.range_base(a.range_channels);
  Codes16 out;
  if (a.range_channels == 1) {
    const float l = lo[base], v = inv[base];
#pragma unroll
    for (int i = 0; i < 16; ++i) out.codes[i] = rules::quantize_code(Storage<T>::load(in.elements[i]), l, v);
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      out.codes[i] = rules::quantize_code(Storage<T>::load(in.elements[i]), lo[base + i], inv[base + i]);
    }
  }
  if (a.inband && at.starts_with_inband_marker()) out.codes[0] = rules::inband_mark(out.codes[0]);
  *reinterpret_cast<uint4*>(codes + first) = out.word;
}

template <DType T>
__global__ void quantize_kernel(const typename Storage<T>::type* __restrict__ x, ElementWalkArgs a,
                                const std::uint32_t* __restrict__ edges, const int* __restrict__ segments,
                                const float* __restrict__ lo, const float* __restrict__ inv,
                                std::int8_t* __restrict__ codes) {
  using S = typename Storage<T>::type;
  const std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t first = chunk * 16;
  if (first >= a.elements) return;
  if (a.row_chunks) return quantize_row_chunk<S, T>(x, a, chunk, edges, segments, lo, inv, codes);
  const int count = a.elements - first < 16 ? static_cast<int>(a.elements - first) : 16;
  const bool whole = a.vectorized && count == 16;

  Chunk16<S> in;
  if (whole) {
    const uint4* src = reinterpret_cast<const uint4*>(x + first);
#pragma unroll
    for (int k = 0; k < static_cast<int>(sizeof(S)); ++k) in.words[k] = src[k];
  } else {
    for (int i = 0; i < count; ++i) in.elements[i] = x[first + i];
  }

  Codes16 out;
  ElementWalk at(first, a.tokens, a.channels, edges, segments);
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    if (i < count) {
      const std::int64_t slot = at.range_slot(a.range_channels);
      std::int8_t code = rules::quantize_code(Storage<T>::load(in.elements[i]), lo[slot], inv[slot]);
      if (a.inband && at.at_inband_marker()) code = rules::inband_mark(code);
      out.codes[i] = code;
      at.advance(i + 1 < count);
    } else {
      out.codes[i] = 0;
    }
  }

  if (whole) {
    *reinterpret_cast<uint4*>(codes + first) = out.word;
  } else {
    for (int i = 0; i < count; ++i) codes[first + i] = out.codes[i];
  }
}

template <DType T>
void launch_typed(const void* x, const ElementWalkArgs& a, const std::uint32_t* edges, const int* segments,
                  const float* lo, const float* inv, std::int8_t* codes, cudaStream_t stream) {
  quantize_kernel<T><<<grid_for((a.elements + 15) / 16, kThreads), kThreads, 0, stream>>>(
      static_cast<const typename Storage<T>::type*>(x), a, edges, segments, lo, inv, codes);
  check_launch("quantize_kernel");
}

}  // namespace

void launch_quantize(const void* x, const DeviceShape& shape, const std::uint32_t* edges, const int* segments,
                     const float* lo, const float* inv, std::int64_t range_channels, bool inband, std::int8_t* codes,
                     cudaStream_t stream) {
  const ElementWalkArgs a = element_walk_args(shape, range_channels, inband, x, codes);
  if (a.elements == 0) return;
  switch (shape.dtype) {
    case DType::f16: return launch_typed<DType::f16>(x, a, edges, segments, lo, inv, codes, stream);
    case DType::bf16: return launch_typed<DType::bf16>(x, a, edges, segments, lo, inv, codes, stream);
    case DType::f32: return launch_typed<DType::f32>(x, a, edges, segments, lo, inv, codes, stream);
  }
}

}  // namespace dgq::cuda::detail

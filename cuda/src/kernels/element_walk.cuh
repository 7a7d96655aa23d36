#pragma once
// Position of a flat element of a [units][tokens][channels] batch, advanced element by
// element. The quantize and dequantize kernels take 16 consecutive elements per thread; this
// keeps the (unit, token, channel, segment) bookkeeping to one division per chunk.
#include <cstdint>

#include "device_common.cuh"

namespace dgq::cuda::detail {

// What the quantize and dequantize kernels know of their batch: its size, its ranges (one per
// segment or per segment and channel), rule 8's in-band markers, and whether both buffers
// allow the 16-byte form (and, with D % 16 == 0, chunks that never cross a row).
struct ElementWalkArgs {
  std::int64_t elements, tokens;
  int channels;
  std::int64_t range_channels;
  bool inband, vectorized;
  bool row_chunks;  // D % 16 == 0 and vectorized: every chunk is whole and inside one row
};

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

inline ElementWalkArgs element_walk_args(const DeviceShape& shape, std::int64_t range_channels, bool inband,
                                         const void* in, const void* out) {
  ElementWalkArgs a{};
  a.elements = shape.elements();
  a.tokens = shape.tokens;
  a.channels = static_cast<int>(shape.channels);
  a.range_channels = range_channels;
  a.inband = inband;
  a.vectorized = aligned16(in) && aligned16(out);
  a.row_chunks = a.vectorized && a.channels % 16 == 0;
  return a;
}

struct ElementWalk {
  std::int64_t tokens;
  int channels;
  const std::uint32_t* all_edges;  // [units][kMaxSegments + 1]
  const int* all_segments;         // [units]

  std::int64_t unit, token;
  int channel, segment, segments;
  const std::uint32_t* edges;

  __device__ ElementWalk(std::int64_t first, std::int64_t tokens_, int channels_, const std::uint32_t* e, const int* s)
      : tokens(tokens_), channels(channels_), all_edges(e), all_segments(s) {
    const std::int64_t per_unit = tokens * channels;
    unit = first / per_unit;
    const std::int64_t rem = first - unit * per_unit;
    token = rem / channels;
    channel = static_cast<int>(rem - token * channels);
    enter_unit();
    segment = segment_of(edges, segments, token, 0);
  }

  __device__ void enter_unit() {
    edges = all_edges + unit * (kMaxSegments + 1);
    segments = all_segments[unit];
  }

  // Moves to the next element; `more` says whether that element exists (so no unit past
  // the batch is ever read).
  __device__ void advance(bool more) {
    if (++channel < channels) return;
    channel = 0;
    if (++token < tokens) {
      segment = segment_of(edges, segments, token, segment);
      return;
    }
    token = 0;
    segment = 0;
    ++unit;
    if (more) enter_unit();
  }

  // Index of this element's range (rule 6): per segment, or per segment and channel.
  __device__ std::int64_t range_slot(std::int64_t range_channels) const {
    return (unit * kMaxSegments + segment) * range_channels + (range_channels == 1 ? 0 : channel);
  }

  // First token of a segment after the first, channel 0: where rule 8 puts in-band markers.
  __device__ bool at_inband_marker() const {
    return channel == 0 && segment > 0 && token == static_cast<std::int64_t>(edges[segment]);
  }
};

// Position of a 16-element chunk that lies inside one row: when D is a multiple of 16 every
// chunk does, so the (unit, token, segment) bookkeeping is done once per chunk and the 16
// elements share a token, a segment and (per segment) a range. The same answers as
// ElementWalk for every element of the chunk (range_slot(i) = ElementWalk's after i advances).
struct RowChunk {
  std::int64_t unit, token;
  int channel0, segment;
  const std::uint32_t* edges;

  __device__ RowChunk(std::int64_t chunk, std::int64_t tokens, int channels, const std::uint32_t* all_edges,
                      const int* all_segments) {
    const int chunks_per_row = channels / 16;
    const std::int64_t row = chunk / chunks_per_row;
    channel0 = static_cast<int>(chunk - row * chunks_per_row) * 16;
    unit = row / tokens;
    token = row - unit * tokens;
    edges = all_edges + unit * (kMaxSegments + 1);
    segment = segment_of(edges, all_segments[unit], token, 0);
  }

  __device__ std::int64_t range_base(std::int64_t range_channels) const {
    return (unit * kMaxSegments + segment) * range_channels + (range_channels == 1 ? 0 : channel0);
  }
  // Element 0 of the chunk carries rule 8's marker: channel 0 of a later segment's first token.
  __device__ bool starts_with_inband_marker() const {
    return channel0 == 0 && segment > 0 && token == static_cast<std::int64_t>(edges[segment]);
  }
};

// 16 elements of storage type S, loadable as sizeof(S) 16-byte words.
template <class S>
union Chunk16 {
  uint4 words[sizeof(S)];
  S elements[16];
};
union Codes16 {
  uint4 word;
  std::int8_t codes[16];
};

}  // namespace dgq::cuda::detail

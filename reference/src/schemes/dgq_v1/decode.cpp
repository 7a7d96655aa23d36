// dgq_decode: rule 7's dequantization over the segments a decoder recovers (rule 8).
#include <string>

#include "decode_view.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "pipeline.hpp"

namespace dgq {
namespace {

void check_decode_shapes(const DgqV1Encoded& enc, MutTensor out) {
  if (out.tokens != enc.tokens || out.channels != enc.channels || out.dtype != enc.dtype)
    throw InputError("decode target is [" + std::to_string(out.tokens) + " x " + std::to_string(out.channels) + "] " +
                     std::string(dtype_name(out.dtype)) + ", the encoded tensor is [" + std::to_string(enc.tokens) +
                     " x " + std::to_string(enc.channels) + "] " + std::string(dtype_name(enc.dtype)));
  const std::int64_t C = enc.params.granularity == Granularity::segment_channel ? enc.channels : 1;
  const std::size_t ranges = static_cast<std::size_t>(enc.segments * C);
  if (enc.lo.size() != ranges || enc.hi.size() != ranges)
    throw InputError("corrupt DGQ data: " + std::to_string(enc.lo.size()) + " lo and " + std::to_string(enc.hi.size()) +
                     " hi values, expected segments*C = " + std::to_string(ranges));
  if (enc.tokens > 0 && out.data == nullptr) throw InputError("decode target has no data (null pointer)");
}

// Rule 8 read back without the codes' bulk. The table and the bitmap need only the token
// count, so they are read through a view with no channels (and no codes); in-band markers
// live in each token's channel-0 code, so a one-channel copy of the codes' first column
// (tokens bytes) carries them. dgq_segment_edges then applies its own checks and messages.
// Gathering that column touches a cache line per token, so it is done only in in-band mode.
std::vector<std::uint32_t> edges_from_markers(const DgqV1Encoded& header, const std::int8_t* codes) {
  DgqV1Encoded markers;
  markers.tokens = header.tokens;
  markers.params = header.params;
  markers.segments = header.segments;
  markers.boundaries = header.boundaries;
  markers.bitmap = header.bitmap;
  if (header.params.markers == Markers::inband) {
    // With no channels there are no codes to carry markers: the column is all zeros.
    markers.channels = 1;
    markers.codes.assign(static_cast<std::size_t>(header.tokens), 0);
    if (header.channels > 0) {
      for (std::int64_t t = 0; t < header.tokens; ++t) markers.codes[t] = codes[t * header.channels];
    }
  }
  return dgq_segment_edges(markers);
}

void decode_segments(const kernels::CpuKernels& k, const DgqV1Encoded& enc, const std::int8_t* codes,
                     const std::vector<std::uint32_t>& edges, MutTensor out) {
  check_decode_shapes(enc, out);
  const std::int64_t D = enc.channels;
  const std::size_t row_bytes = static_cast<std::size_t>(D) * dtype_size(enc.dtype);
  std::vector<float> lo, scale;
  for (int s = 0; s < enc.segments; ++s) {
    detail::segment_row_params(enc, s, lo, scale, /*inverse=*/false);
    for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t) {
      void* row = static_cast<unsigned char*>(out.data) + static_cast<std::size_t>(t) * row_bytes;
      k.dequantize_row(codes + t * D, D, lo.data(), scale.data(), enc.dtype, row);
    }
    if (s > 0 && enc.params.markers == Markers::inband) {
      // The segment's first channel-0 code carries the marker: decode it unmarked (lossy).
      const std::int64_t t = edges[s];
      const float v = rules::dequantize_code(rules::inband_unmark(codes[t * D]), lo[0], scale[0]);
      store_element(out, t * D, v);
    }
  }
}

}  // namespace

void dgq_decode(const DgqV1Encoded& enc, MutTensor out) {
  const std::vector<std::uint32_t> edges = dgq_segment_edges(enc);
  decode_segments(kernels::kernels_for(Device::cpu), enc, enc.codes.data(), edges, out);
}

void detail::dgq_decode_codes(const kernels::CpuKernels& k, const DgqV1Encoded& header, const std::int8_t* codes,
                              MutTensor out) {
  const std::vector<std::uint32_t> edges = edges_from_markers(header, codes);
  decode_segments(k, header, codes, edges, out);
}

}  // namespace dgq

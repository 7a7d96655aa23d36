// dgq2's direct encode path, the fast CPU implementation's (the table entry
// dgq2_compress_direct, dgq/kernels/cpu_kernels.hpp): the input, or its rotated rows rounded to
// the input dtype, read row by row through the kernel table with no fp32 copy of the tensor. It
// gives the bytes and errors of the reference's rules path (reference/src/schemes/
// dgq2_scheme.cpp); tests/reference/test_scheme_cpu_conformance.cpp compares the two. It uses
// v1's pass 1 through the public dgq/kernels/dgq_pass_one.hpp, not v1's private pipeline.
//
// Why catch-and-recheck blocks remain (non_finite_errors_first, check_residual_finite and the
// catch around scan_tensor): reading row by row meets a range that does not fit, or a NaN of
// the raw residual rows, before a NaN/Inf further on that the rules (which check the whole
// tensor first) report instead. Checking the whole tensor up front would cost a pass over it;
// the catch re-checks only when an error is on its way out, so the fast path keeps one read.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/kernels/dgq_pass_one.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/schemes/dgq2/layout.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/schemes/dgq2/range_store.hpp"
#include "dgq/schemes/dgq2/range_where.hpp"
#include "dgq/schemes/dgq2/segments.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "fast_kernels.hpp"

namespace dgq::cpu {
namespace {

using namespace schemes;
using namespace schemes::dgq2;

// The first NaN/Inf of the raw rows (tokens quantized.. of x), named by its token in x.
void check_residual_finite(ConstTensor x, std::int64_t quantized) {
  if (x.tokens <= quantized) return;
  const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
  const ConstTensor rest{static_cast<const std::uint8_t*>(x.data) + quantized * row_bytes, x.dtype,
                         x.tokens - quantized, x.channels};
  try {
    check_finite(rest, "dgq2");
  } catch (const InputError&) {
    check_finite(x, "dgq2");  // the same NaN/Inf, named by its token in x
    throw;
  }
}

// encode_spans for granularity token on the rows of x: eight rows at a time are widened
// (with the NaN/Inf check of check_finite, row by row), their extremes taken, their ranges
// stored (eight at once when they are fp16 numbers, else one by one in token order) and
// their codes packed.
void encode_tokens_direct(const kernels::CpuKernels& k, const Params& p, ConstTensor x,
                          std::vector<std::uint8_t>& codes, std::vector<std::uint8_t>& ranges) {
  const std::int64_t d = x.channels, quantized = x.tokens;
  ranges.reserve(static_cast<std::size_t>(quantized) * range_pair_bytes(p.range_dtype));
  const int levels = p.levels();
  const int offset = p.seg.markers == Markers::inband ? 1 : 0;
  const bool nibble_rows = p.bits == 4 && d % 2 == 0;
  constexpr std::int64_t kRows = 8;
  std::vector<float> rows(static_cast<std::size_t>(kRows * d));
  std::vector<std::uint8_t> q(static_cast<std::size_t>(d));
  float mins[kRows], maxs[kRows], lo[kRows], inv[kRows];
  for (std::int64_t t0 = 0; t0 < quantized; t0 += kRows) {
    const std::int64_t count = std::min(kRows, quantized - t0);
    for (std::int64_t r = 0; r < count; ++r) {
      widen_row_checked(k, x, t0 + r, rows.data() + r * d, "dgq2");
      const kernels::Extremes m = k.min_max(rows.data() + r * d, d);
      mins[r] = m.lo;
      maxs[r] = m.hi;
    }
    std::int64_t first_scalar = 0;
    if (count == kRows && p.range_dtype == RangeDtype::fp16 &&
        k.store_fp16_ranges8(mins, maxs, levels, ranges, lo, inv)) {
      first_scalar = kRows;
    }
    for (std::int64_t r = first_scalar; r < count; ++r) {
      const StoredRange sr = store_range(MinMax{mins[r], maxs[r]}, p.range_dtype, ranges,
                                         [&] { return "token " + std::to_string(t0 + r); });
      lo[r] = sr.lo;
      inv[r] = uniform_inverse(sr.lo, sr.hi, levels);
    }
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t t = t0 + r;
      if (nibble_rows) {
        k.uniform_nibbles(rows.data() + r * d, d, lo[r], inv[r], levels, offset, codes.data() + t * (d / 2));
        continue;
      }
      k.uniform_codes_offset(rows.data() + r * d, d, lo[r], inv[r], levels, offset, q.data());
      pack_codes(codes.data(), static_cast<std::uint64_t>(t * d), q.data(), static_cast<std::uint64_t>(d), p.bits);
    }
  }
}

// encode_spans on the rows of x (already checked finite), widened a row at a time; `pass`
// (v1's pass 1 on x, or null) gives the extremes of spans made of whole win-token blocks.
void encode_spans_direct(const kernels::CpuKernels& k, const Params& p, ConstTensor x, RangeGranularity g, int group,
                         const std::vector<std::uint32_t>& edges, const kernels::PassOne* pass,
                         std::vector<std::uint8_t>& codes, std::vector<std::uint8_t>& ranges) {
  const std::int64_t d = x.channels, quantized = edges.back();
  const std::vector<TokenSpan> spans = range_spans(g, group, edges, quantized);
  const bool channelwise = per_channel(g);
  ranges.reserve(spans.size() * (channelwise ? static_cast<std::size_t>(d) : 1) * range_pair_bytes(p.range_dtype));
  const bool inband = p.seg.markers == Markers::inband;
  const int levels = p.levels();
  const int offset = inband ? 1 : 0;
  const std::int64_t win = p.seg.win;
  const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
  const auto* raw = static_cast<const std::uint8_t*>(x.data);
  std::vector<float> lo(static_cast<std::size_t>(d)), inv(lo.size());
  std::vector<float> mins(static_cast<std::size_t>(d)), maxs(mins.size()), row(mins.size());
  std::vector<MinMax> extremes(channelwise ? static_cast<std::size_t>(d) : 1);
  std::vector<std::uint8_t> q(static_cast<std::size_t>(d));
  const bool nibble_rows = p.bits == 4 && d % 2 == 0;
  std::size_t next_edge = 1;  // edges[next_edge] is the next segment start to mark in-band
  std::size_t segment = 0;
  for (const TokenSpan& s : spans) {
    while (segment + 1 < edges.size() && edges[segment + 1] <= s.first) ++segment;
    const std::int64_t extreme_channels = channelwise ? d : 1;
    const bool whole_blocks = pass != nullptr && pass->range_channels == extreme_channels && s.first % win == 0 &&
                              (s.end % win == 0 || s.end == quantized);
    if (whole_blocks) {
      // Pass 1's block extremes, folded over the span's blocks.
      std::fill(mins.begin(), mins.end(), INFINITY);
      std::fill(maxs.begin(), maxs.end(), -INFINITY);
      float* mn = mins.data();
      float* mx = maxs.data();
      for (std::int64_t b = s.first / win; b * win < s.end; ++b) {
        const float* bl = pass->block_lo.data() + b * extreme_channels;
        const float* bh = pass->block_hi.data() + b * extreme_channels;
        for (std::int64_t j = 0; j < extreme_channels; ++j) {
          mn[j] = bl[j] < mn[j] ? bl[j] : mn[j];
          mx[j] = bh[j] > mx[j] ? bh[j] : mx[j];
        }
      }
      for (std::int64_t j = 0; j < extreme_channels; ++j) extremes[j] = MinMax{mn[j], mx[j]};
    } else if (channelwise) {
      std::fill(mins.begin(), mins.end(), INFINITY);
      std::fill(maxs.begin(), maxs.end(), -INFINITY);
      float* mn = mins.data();
      float* mx = maxs.data();
      for (std::int64_t t = s.first; t < s.end; ++t) {
        k.load_row(raw + t * row_bytes, x.dtype, d, row.data());
        const float* r = row.data();
        for (std::int64_t j = 0; j < d; ++j) {
          mn[j] = r[j] < mn[j] ? r[j] : mn[j];
          mx[j] = r[j] > mx[j] ? r[j] : mx[j];
        }
      }
      for (std::int64_t j = 0; j < d; ++j) extremes[j] = MinMax{mn[j], mx[j]};
    } else {
      MinMax all;
      for (std::int64_t t = s.first; t < s.end; ++t) {
        k.load_row(raw + t * row_bytes, x.dtype, d, row.data());
        const kernels::Extremes m = k.min_max(row.data(), d);
        all.add(m.lo);
        all.add(m.hi);
      }
      extremes[0] = all;
    }
    std::size_t first_scalar = 0;
    if (channelwise && p.range_dtype == RangeDtype::fp16) {
      // Eight channels at a time while their extremes are fp16 numbers; the rest (and any
      // range that must round outwards or does not fit) one at a time, in order.
      while (first_scalar + 8 <= extremes.size() &&
             k.store_fp16_ranges8(mins.data() + first_scalar, maxs.data() + first_scalar, levels, ranges,
                                  lo.data() + first_scalar, inv.data() + first_scalar)) {
        first_scalar += 8;
      }
    }
    for (std::size_t c = first_scalar; c < extremes.size(); ++c) {
      const StoredRange r =
          store_range(extremes[c], p.range_dtype, ranges, [&] { return range_where(g, s, segment, channelwise, c); });
      lo[c] = r.lo;  // c = 0 only when one range covers the span
      inv[c] = uniform_inverse(r.lo, r.hi, levels);
    }
    for (std::int64_t t = s.first; t < s.end; ++t) {
      const bool mark = inband && next_edge + 1 < edges.size() && edges[next_edge] == t;
      if (nibble_rows) {
        // Rule V5's bytes of the row, from the input row, written directly (it starts on a
        // byte: d is even).
        std::uint8_t* out = codes.data() + t * (d / 2);
        k.uniform_nibbles_row(raw + t * row_bytes, x.dtype, d, lo.data(), inv.data(), channelwise, levels, offset, out);
        if (mark) {
          out[0] = static_cast<std::uint8_t>((out[0] & 0xf0u) | inband_mark(out[0] & 0x0fu, p.bits));
          ++next_edge;
        }
        continue;
      }
      // A one-token span's row is still in the buffer from its extremes.
      if (whole_blocks || s.end - s.first != 1) k.load_row(raw + t * row_bytes, x.dtype, d, row.data());
      if (channelwise) {
        k.uniform_codes_per_channel(row.data(), d, lo.data(), inv.data(), levels, offset, q.data());
      } else {
        k.uniform_codes_offset(row.data(), d, lo[0], inv[0], levels, offset, q.data());
      }
      if (mark) {
        q[0] = inband_mark(q[0], p.bits);
        ++next_edge;
      }
      pack_codes(codes.data(), static_cast<std::uint64_t>(t * d), q.data(), static_cast<std::uint64_t>(d), p.bits);
    }
  }
}

}  // namespace

// compress() without rotation: the codes describe the input itself, so it is read in its own
// dtype, row by row, with no fp32 copy of the tensor: v1's pass 1 (scan_tensor: rule 0's
// finiteness, rule 1's variances and the extremes of every win-token block) on the
// quantized rows, then per span its extremes (from the block extremes when the span is made
// of whole blocks, else from its rows) and its codes, a row at a time through a buffer that
// stays in L1. The same values reach the same rules as in the fp32-copy path (widening is
// exact; min and max do not depend on the order, and the stored endpoints drop the sign of
// a zero), and the errors are raised in the same order: the first NaN/Inf of the whole
// tensor before a variance that overflows, both before a range that does not fit.
// With `rotated` (the quantized rows of x rotated and rounded to x.dtype, rule V0; x checked
// finite) the codes describe it instead, and the segments are cut on it or, with
// seg_on=input, on x (then every span's extremes come from its rows).
Compressed dgq2_compress_direct(const kernels::CpuKernels& k, const Params& p, const std::string& spec, ConstTensor x,
                                TensorRole role, const ConstTensor* rotated) {
  Compressed c = start_compressed(spec, x, role);
  const std::int64_t d = x.channels, quantized = quantized_tokens(x.tokens, p.residual);
  const std::int64_t n = quantized * d;
  const ConstTensor input_head{x.data, x.dtype, quantized, d};
  const ConstTensor head = rotated != nullptr ? *rotated : input_head;
  const bool basis_is_head = rotated == nullptr || !p.segment_on_input;
  const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
  const auto* raw = static_cast<const std::uint8_t*>(x.data);

  const RangeGranularity g = p.granularity(role);
  const bool segments = uses_segments(g);
  std::vector<std::uint32_t> edges{0};
  kernels::PassOne pass;
  if (segments && quantized > 0) {
    DgqV1Params v1 = p.seg;
    v1.max_groups = 1;
    v1.granularity = per_channel(g) ? Granularity::segment_channel : Granularity::segment;
    v1.validate();
    try {
      pass = kernels::scan_tensor(k, basis_is_head ? head : input_head, v1);
    } catch (const InputError& e) {
      check_finite(x, "dgq2");  // a NaN/Inf anywhere is named first, as when checked up front
      throw InputError(std::string("dgq2: ") + e.what());
    }
    edges = edges_from_ratios(kernels::block_ratios(kernels::block_means(pass.token_var, v1.win)), quantized, p);
    check_residual_finite(x, quantized);
  } else if (segments) {
    check_finite(x, "dgq2");  // no quantized rows
  } else if (quantized > 0) {
    edges.push_back(static_cast<std::uint32_t>(quantized));
  }

  std::vector<std::uint8_t> codes(packed_code_bytes(static_cast<std::uint64_t>(n), p.bits), 0);
  std::vector<std::uint8_t> ranges;
  if (segments) {
    encode_spans_direct(k, p, head, g, p.group(role), edges, basis_is_head ? &pass : nullptr, codes, ranges);
  } else {
    // Rows checked as they are widened; an error of an earlier row (a range that does not
    // fit) gives way to the tensor's first NaN/Inf, as when the tensor was checked first.
    non_finite_errors_first(x, "dgq2", [&] { encode_tokens_direct(k, p, head, codes, ranges); });
    check_residual_finite(x, quantized);
  }

  std::vector<std::uint8_t> residual(raw + quantized * row_bytes, raw + x.tokens * row_bytes);
  c.parts.push_back({"codes", std::move(codes)});
  c.parts.push_back({"ranges", std::move(ranges)});
  c.parts.push_back({"markers", segments ? marker_part(edges, quantized, p.seg.markers) : std::vector<std::uint8_t>{}});
  c.parts.push_back({"residual", std::move(residual)});
  if (segments) c.diagnostics.segments = SegmentDiagnostics{std::move(edges)};
  return c;
}

}  // namespace dgq::cpu

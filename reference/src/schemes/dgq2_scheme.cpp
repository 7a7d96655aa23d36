// dgq2: DGQ v2 (docs/spec.md, "DGQ v2"): v1's variance segments with packed 2/3/4/8-bit codes,
// a range granularity per role (segment, segment-channel, token, segment-channel-group), the
// most recent tokens raw, fp16 or fp32 ranges, and its own Hadamard rotation, so that the
// segmentation can be computed on the rotated or the unrotated K (rule V0 says why dgq2 does
// not use the generic rot modifier). Parts: "codes" (rule V5), "ranges" (V4), "markers" (V6:
// the boundary table or bitmap; empty for inband and for a role that does not segment) and
// "residual" (V1). The helpers are in schemes/dgq2/.
//
// One encode path per backend, with the same bytes: the reference's (Device::reference) is
// the rules written out on a whole-tensor fp32 copy (compress below); the fast CPU
// implementation's (Device::cpu, registered by cpu/ through dgq/kernels/families.hpp) reads the
// input, or its rotated rows rounded to the input dtype, row by row with v1's pass 1 and the
// kernel table's code kernels (the table's dgq2_compress_direct, in cpu/), except for fp32 input with rotation,
// which keeps the rules path (it had to while a rotation could overflow to inf, which only that path
// reported; rule V0.2's bound now refuses such input first, and moving it was not measured).
// tests/reference/test_scheme_cpu_conformance.cpp compares the two registrations;
// test_scheme_dgq2_fast.cpp compares the direct path with a plain rules copy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/kernels/online_segments.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/registry.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/dgq2/layout.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/schemes/dgq2/params.hpp"
#include "dgq/schemes/dgq2/range_store.hpp"
#include "dgq/schemes/dgq2/range_where.hpp"
#include "dgq/schemes/dgq2/rotation_input.hpp"
#include "dgq/schemes/dgq2/segments.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

using dgq2::Params;
using dgq2::RangeGranularity;

// Rule V0: the rows rounded to dtype after each step a cache of that dtype would round at, as
// the rot modifier does (widen, rotate, round to the input dtype, widen).
void round_through(const kernels::CpuKernels& k, std::vector<float>& values, std::int64_t tokens, std::int64_t channels,
                   DType dtype) {
  if (dtype == DType::f32 || tokens == 0) return;
  thread_local std::vector<std::uint8_t> bytes;  // scratch, as scratch() below
  bytes.resize(static_cast<std::size_t>(tokens * channels) * dtype_size(dtype));
  const MutTensor t{bytes.data(), dtype, tokens, channels};
  narrow_into(k, values.data(), t);
  to_float(ConstTensor(t), values);
}

// Per-thread fp32 scratch kept between calls (as rotation_scheme.cpp's): a fresh vector per
// tensor spends more time zero-filling and page-faulting than encoding. Index 0: the widened
// input; 1: the rotated rows; 2: decoded values.
std::vector<float>& scratch(int which) {
  thread_local std::vector<float> buffers[3];
  return buffers[which];
}

class Dgq2Scheme final : public Scheme {
 public:
  // k: the kernels of the rotation and, in cpu/'s table, the row-by-row encoder
  // (k.dgq2_compress_direct); the reference's table has none and encodes by the rules.
  Dgq2Scheme(const Params& p, const kernels::CpuKernels& k) : p_(p), spec_(p.spec()), k_(k) {}

  std::string family() const override { return "dgq2"; }
  std::string spec() const override { return spec_; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "dgq2");
    check_shape(x.tokens, x.channels);
    const Params p = p_.for_role(role);
    const auto direct = k_.dgq2_compress_direct;
    if (direct != nullptr && !p.rotate) return direct(k_, p, spec_, x, role, nullptr);
    // Rule V0.1's order: dtype, shape, head_dim (above and here), NaN/Inf, the V0.2 bound.
    const int block = p.rotate ? rotation_block(x.channels, role) : 0;
    check_finite(x, "dgq2");  // the first NaN/Inf named, before anything is computed
    if (p.rotate) dgq2::check_rotation_input(x, dgq2::quantized_tokens(x.tokens, p.residual), block);
    if (direct != nullptr && x.dtype != DType::f32) {
      // fp16/bf16: the rotated rows rounded to the input dtype (rule V0) are a tensor of that
      // dtype, built a few rows at a time, and compress_direct codes it like an input. (fp32
      // input keeps the path below, see the top of the file.)
      const std::int64_t d = x.channels, quantized = dgq2::quantized_tokens(x.tokens, p.residual);
      thread_local std::vector<std::uint8_t> bytes;  // scratch, as scratch() below
      bytes.resize(static_cast<std::size_t>(quantized * d) * dtype_size(x.dtype));
      const MutTensor r{bytes.data(), x.dtype, quantized, d};
      const std::int64_t step = rows_per_step(d);
      std::vector<float> rows(static_cast<std::size_t>(step * d));
      const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
      const auto* raw = static_cast<const std::uint8_t*>(x.data);
      for (std::int64_t t0 = 0; t0 < quantized; t0 += step) {
        const std::int64_t count = std::min(step, quantized - t0);
        for (std::int64_t k = 0; k < count; ++k) {
          float* row = rows.data() + k * d;
          k_.load_row(raw + (t0 + k) * row_bytes, x.dtype, d, row);
          hadamard_rotate_row(k_, row, d, block);
        }
        narrow_rows_into(k_, rows.data(), r, t0, count);
      }
      const ConstTensor rotated{bytes.data(), x.dtype, quantized, d};
      return direct(k_, p, spec_, x, role, &rotated);
    }
    std::vector<float>& input = scratch(0);
    to_float(x, input);
    Compressed c = start_compressed(spec_, x, role);
    const std::int64_t d = x.channels, quantized = dgq2::quantized_tokens(x.tokens, p.residual);
    const std::int64_t n = quantized * d;

    // The tensor the codes describe: the input, or its rotation rounded to the input dtype.
    std::vector<float>& rotated = scratch(1);
    if (p.rotate) rotate_rows(input, quantized, d, block, x.dtype, rotated);
    const float* v = p.rotate ? rotated.data() : input.data();

    const RangeGranularity g = p.granularity(role);
    std::vector<std::uint32_t> edges{0};
    if (dgq2::uses_segments(g)) {
      const float* basis = p.rotate && p.segment_on_input ? input.data() : v;
      edges = dgq2::choose_edges(basis, quantized, d, p);
    } else if (quantized > 0) {
      edges.push_back(static_cast<std::uint32_t>(quantized));
    }

    std::vector<std::uint8_t> codes(dgq2::packed_code_bytes(static_cast<std::uint64_t>(n), p.bits), 0);
    std::vector<std::uint8_t> ranges;
    encode_spans(p, v, d, g, p.group(role), edges, codes, ranges);

    const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
    const auto* raw = static_cast<const std::uint8_t*>(x.data);
    std::vector<std::uint8_t> residual(raw + quantized * row_bytes, raw + x.tokens * row_bytes);
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"ranges", std::move(ranges)});
    c.parts.push_back({"markers", dgq2::uses_segments(g) ? dgq2::marker_part(edges, quantized, p.seg.markers)
                                                         : std::vector<std::uint8_t>{}});
    c.parts.push_back({"residual", std::move(residual)});
    if (dgq2::uses_segments(g)) c.diagnostics.segments = SegmentDiagnostics{std::move(edges)};
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec_);
    const Params p = p_.for_role(c.role);
    const std::int64_t d = c.channels, quantized = dgq2::quantized_tokens(c.tokens, p.residual);
    const std::int64_t n = quantized * d;
    const int block = p.rotate && n > 0 ? rotation_block(d, c.role) : 0;
    const Part& codes = expect_part(c, "codes", dgq2::packed_code_bytes(static_cast<std::uint64_t>(n), p.bits));
    const Part* markers = c.find("markers");
    if (markers == nullptr) throw InputError(c.scheme + ": part 'markers' is missing");
    const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(c.dtype);
    const Part& residual = expect_part(c, "residual", static_cast<std::uint64_t>(c.tokens - quantized) * row_bytes);

    const RangeGranularity g = p.granularity(c.role);
    std::vector<std::uint32_t> edges{0};
    if (dgq2::uses_segments(g)) {
      edges = dgq2::edges_from_parts(markers->bytes, codes.bytes.data(), codes.bytes.size(), quantized, d, p, spec_);
    } else {
      if (!markers->bytes.empty()) throw InputError(spec_ + ": corrupt dgq2 data: markers for a role without segments");
      if (quantized > 0) edges.push_back(static_cast<std::uint32_t>(quantized));
    }
    const std::vector<dgq2::TokenSpan> spans = dgq2::range_spans(g, p.group(c.role), edges, quantized);
    const std::uint64_t per_span = dgq2::per_channel(g) ? static_cast<std::uint64_t>(d) : 1;
    const Part& ranges = expect_part(c, "ranges", spans.size() * per_span * dgq2::range_pair_bytes(p.range_dtype));

    std::vector<float>& values = scratch(2);
    values.resize(static_cast<std::size_t>(n));
    std::vector<float> lo(static_cast<std::size_t>(d)), scale(lo.size());
    std::vector<std::uint8_t> row(static_cast<std::size_t>(d));
    const bool inband = p.seg.markers == Markers::inband;
    const int levels = p.levels();
    std::size_t range_index = 0;
    for (const dgq2::TokenSpan& s : spans) {
      for (std::uint64_t k = 0; k < per_span; ++k) {
        const dgq2::StoredRange r = dgq2::load_range(ranges.bytes, range_index++, p.range_dtype);
        if (!std::isfinite(r.hi - r.lo)) {  // compress never stores one (V4): 0 * inf would decode as NaN
          throw InputError(spec_ + ": corrupt dgq2 data: range " + std::to_string(range_index - 1) +
                           " is wider than fp32");
        }
        lo[k] = r.lo;  // k = 0 only when one range covers the span
        scale[k] = uniform_scale(r.lo, r.hi, levels);
      }
      const bool channelwise = per_span != 1;
      for (std::int64_t t = s.first; t < s.end; ++t) {
        dgq2::unpack_codes(codes.bytes.data(), codes.bytes.size(), static_cast<std::uint64_t>(t * d), row.data(),
                           static_cast<std::uint64_t>(d), p.bits);
        if (inband) {
          // Data codes are q + 1; a marker (0 or 2^b - 1) decodes as the nearest one.
          for (std::int64_t j = 0; j < d; ++j) row[j] = static_cast<std::uint8_t>(std::clamp(row[j] - 1, 0, levels));
        }
        float* y = values.data() + t * d;
        if (channelwise) {
          for (std::int64_t j = 0; j < d; ++j) y[j] = uniform_value(row[j], lo[j], scale[j]);
        } else {
          const float lo0 = lo[0], scale0 = scale[0];
          for (std::int64_t j = 0; j < d; ++j) y[j] = uniform_value(row[j], lo0, scale0);
        }
      }
    }
    const MutTensor head{out.data, out.dtype, quantized, d};
    if (p.rotate) {
      // The modifier's decode (rule V0): round to the dtype, rotate back in fp32, round.
      round_through(k_, values, quantized, d, c.dtype);
      for (std::int64_t t = 0; t < quantized; ++t) hadamard_rotate_row(k_, values.data() + t * d, d, block);
      // Rule V0.3: below the V0.2 bound this cannot overflow; stored ranges that make it are
      // corrupt, and an inf would otherwise reach a fp32 output (or saturate silently).
      for (std::int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(values[static_cast<std::size_t>(i)])) {
          throw InputError(spec_ + ": corrupt dgq2 data: the inverse rotation overflows fp32 at token " +
                           std::to_string(i / d) + ", channel " + std::to_string(i % d));
        }
      }
    }
    // Saturating (rule V0.3): a finite value beyond the output dtype's range becomes its largest.
    narrow_into(k_, values.data(), head);
    if (!residual.bytes.empty()) {
      std::memcpy(static_cast<std::uint8_t*>(out.data) + quantized * row_bytes, residual.bytes.data(),
                  residual.bytes.size());
    }
  }

  // Data-dependent for segmenting roles: the upper bound (layout.hpp); exact for token.
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    return dgq2::planned_bytes(p_, role, tokens, channels, dtype);
  }

  // Rule C4 (docs/spec.md, "Causal caches"): the quantized rows arrive delayed by the residual;
  // a token role's rows are final as they arrive, a segmenting role's once no later change
  // point (rule C3) can move their range.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    const Params form = online_params();  // throws for boundaries=fixed
    const Params p = form.for_role(role);
    check_input_dtype(x, "dgq2");
    check_shape(x.tokens, x.channels);
    const int block = p.rotate ? rotation_block(x.channels, role) : 0;
    check_finite(x, "dgq2");
    if (p.rotate) dgq2::check_rotation_input(x, dgq2::quantized_tokens(x.tokens, p_.residual), block);
    const std::int64_t d = x.channels, quantized = dgq2::quantized_tokens(x.tokens, p_.residual);
    const RangeGranularity g = p.granularity(role);
    std::vector<std::uint32_t> edges, final_rows;  // interior edges of the quantized rows (rule C3)
    if (dgq2::uses_segments(g)) {
      // Rule V2's basis of the rows that will be quantized, as compress builds it.
      std::vector<float> input, rotated;
      to_float(ConstTensor{x.data, x.dtype, quantized, d}, input);
      if (p.rotate) rotate_rows(input, quantized, d, block, x.dtype, rotated);
      const std::vector<std::uint32_t> all =
          dgq2::choose_edges(p.rotate && !p.segment_on_input ? rotated.data() : input.data(), quantized, d, p);
      if (all.size() > 2) edges.assign(all.begin() + 1, all.end() - 1);
      const int group = g == RangeGranularity::segment_channel_group ? p.group(role) : 0;
      final_rows = kernels::online_final_rows(edges, quantized, p.seg.win, group);
    } else {
      for (std::int64_t t = 0; t < quantized; ++t) final_rows.push_back(static_cast<std::uint32_t>(t + 1));
    }
    std::vector<std::uint32_t> prefix_edges;
    const auto bytes = [&](std::uint32_t c) {
      // Rule V7 of the causal form's compress of x[0:c]: its edges are x's below c (rule C3).
      prefix_edges.assign(1, 0);
      for (const std::uint32_t e : edges) {
        if (e < c) prefix_edges.push_back(e);
      }
      if (c > 0) prefix_edges.push_back(c);
      return dgq2::stored_bytes(form, role, c, d, x.dtype, prefix_edges).total();
    };
    return kernels::delayed_schedule(final_rows, p_.residual, x.tokens, bytes);
  }

  // The same spec with boundaries=online (adaptive's causal form) and no residual: the final
  // prefix is all quantized, the residual's tokens being the raw tail of the cache.
  std::unique_ptr<Scheme> causal_form() const override { return std::make_unique<Dgq2Scheme>(online_params(), k_); }

  // The residual, and a segmenting role's open segment or group (rule C4); boundaries=fixed has
  // no causal cache, so only its residual is raw.
  bool keeps_raw_rows(TensorRole role) const override {
    return p_.residual > 0 || (!p_.fixed_boundaries && dgq2::uses_segments(p_.granularity(role)));
  }

 private:
  Params online_params() const {
    if (p_.fixed_boundaries) {
      throw ParameterError(
          "dgq2: boundaries=fixed has no causal form (equal segments need the final length); use boundaries=online or "
          "adaptive");
    }
    Params p = p_;
    p.seg.boundaries = Boundaries::online;
    p.residual = 0;
    return p;
  }

  // Rule V0: the first `rows` rows of input ([.][d] fp32) rotated with the role's block and
  // rounded to dtype, into rotated.
  void rotate_rows(const std::vector<float>& input, std::int64_t rows, std::int64_t d, int block, DType dtype,
                   std::vector<float>& rotated) const {
    rotated.assign(input.begin(), input.begin() + rows * d);
    for (std::int64_t t = 0; t < rows; ++t) hadamard_rotate_row(k_, rotated.data() + t * d, d, block);
    round_through(k_, rotated, rows, d, dtype);
  }

  static void check_shape(std::int64_t tokens, std::int64_t channels) {
    if (channels < 1) throw InputError("dgq2: channels must be >= 1, got " + std::to_string(channels));
    if (tokens < 0 || tokens > 0xffffffffLL) {
      throw InputError("dgq2: tokens must be in [0, 2^32 - 1], got " + std::to_string(tokens));
    }
  }

  int rotation_block(std::int64_t channels, TensorRole role) const {
    const int block = rules::hadamard_block(channels, role == TensorRole::key);
    if (block == 0) {
      throw InputError("dgq2: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got " +
                       std::to_string(channels));
    }
    return block;
  }

  // Rules V3-V6 on the quantized rows v: per span, the ranges (stored), then its rows' codes,
  // packed; channel 0 of every segment's first token but the first carries the in-band marker.
  static void encode_spans(const Params& p, const float* v, std::int64_t d, RangeGranularity g, int group,
                           const std::vector<std::uint32_t>& edges, std::vector<std::uint8_t>& codes,
                           std::vector<std::uint8_t>& ranges) {
    const std::int64_t quantized = edges.back();
    const std::vector<dgq2::TokenSpan> spans = dgq2::range_spans(g, group, edges, quantized);
    const bool channelwise = dgq2::per_channel(g);
    ranges.reserve(spans.size() * (channelwise ? static_cast<std::size_t>(d) : 1) *
                   dgq2::range_pair_bytes(p.range_dtype));
    const bool inband = p.seg.markers == Markers::inband;
    const int levels = p.levels();
    const int offset = inband ? 1 : 0;
    std::vector<float> lo(static_cast<std::size_t>(d)), inv(lo.size());
    // Running minima and maxima in plain arrays, one per channel, or one pair over the span's
    // contiguous rows (an OpenMP simd min/max reduction). Min and max do not depend on the
    // order they are taken in, and the stored endpoints carry no sign of zero (V4), so both give
    // the bytes of a single running pair, in loops the compiler vectorizes.
    std::vector<float> mins(static_cast<std::size_t>(d)), maxs(mins.size());
    std::vector<MinMax> extremes(channelwise ? static_cast<std::size_t>(d) : 1);
    std::vector<std::uint8_t> row(static_cast<std::size_t>(d));
    std::size_t next_edge = 1;  // edges[next_edge] is the next segment start to mark in-band
    std::size_t segment = 0;
    for (const dgq2::TokenSpan& s : spans) {
      while (segment + 1 < edges.size() && edges[segment + 1] <= s.first) ++segment;
      if (channelwise) {
        std::fill(mins.begin(), mins.end(), INFINITY);
        std::fill(maxs.begin(), maxs.end(), -INFINITY);
        float* mn = mins.data();
        float* mx = maxs.data();
        for (std::int64_t t = s.first; t < s.end; ++t) {
          const float* x = v + t * d;
          for (std::int64_t j = 0; j < d; ++j) {
            mn[j] = x[j] < mn[j] ? x[j] : mn[j];
            mx[j] = x[j] > mx[j] ? x[j] : mx[j];
          }
        }
        for (std::int64_t j = 0; j < d; ++j) extremes[j] = MinMax{mn[j], mx[j]};
      } else {
        const float* x = v + static_cast<std::int64_t>(s.first) * d;
        const std::int64_t count = static_cast<std::int64_t>(s.end - s.first) * d;
        float lo_all = INFINITY, hi_all = -INFINITY;
#pragma omp simd reduction(min : lo_all) reduction(max : hi_all)
        for (std::int64_t i = 0; i < count; ++i) {
          lo_all = x[i] < lo_all ? x[i] : lo_all;
          hi_all = x[i] > hi_all ? x[i] : hi_all;
        }
        extremes[0] = MinMax{lo_all, hi_all};
      }
      for (std::size_t k = 0; k < extremes.size(); ++k) {
        const dgq2::StoredRange r = dgq2::store_range(extremes[k], p.range_dtype, ranges,
                                                      [&] { return range_where(g, s, segment, channelwise, k); });
        lo[k] = r.lo;  // k = 0 only when one range covers the span
        inv[k] = uniform_inverse(r.lo, r.hi, levels);
      }
      for (std::int64_t t = s.first; t < s.end; ++t) {
        const float* x = v + t * d;
        if (channelwise) {
          for (std::int64_t j = 0; j < d; ++j) {
            row[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo[j], inv[j], levels) + offset);
          }
        } else {
          const float lo0 = lo[0], inv0 = inv[0];
          for (std::int64_t j = 0; j < d; ++j) {
            row[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo0, inv0, levels) + offset);
          }
        }
        if (inband && next_edge + 1 < edges.size() && edges[next_edge] == t) {
          row[0] = dgq2::inband_mark(row[0], p.bits);
          ++next_edge;
        }
        dgq2::pack_codes(codes.data(), static_cast<std::uint64_t>(t * d), row.data(), static_cast<std::uint64_t>(d),
                         p.bits);
      }
    }
  }

  Params p_;
  std::string spec_;
  const kernels::CpuKernels& k_;
};

}  // namespace
std::vector<SchemeFamily> dgq2_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "dgq2",
          .device = device,
          .order = 160,
          .summary =
              "DGQ v2: v1's variance segments with packed 2/3/4/8-bit codes, ranges per segment, segment-channel, "
              "token or channel group (K and V apart), fp16/fp32 ranges, raw recent tokens (docs/spec.md)",
          .params = dgq2::dgq2_scheme_params(),
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            return std::make_unique<Dgq2Scheme>(dgq2::params_from_args(args), *kt);
          },
          .accepts_channels = [](std::int64_t channels) { return channels >= 1; },
          .stored_size = SchemeFamily::StoredSize::at_most,  // v1's segments: their count is the data's
          .stored_layout = StoredLayout::span_codes,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_dgq2 =
    register_scheme_families(dgq2_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes

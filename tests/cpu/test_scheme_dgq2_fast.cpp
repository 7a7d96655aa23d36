// cpu/'s dgq2 (Device::cpu) without rotation compresses straight from the input (v1's pass 1 on the input's own
// dtype, extremes folded from whole blocks, AVX2 codes packed a row at a time). Its bytes and
// errors must be those of the rules written out plainly: the tensor widened to fp32, the
// edges of choose_edges on the copy, every span's extremes taken element by element, every
// code by uniform_code and packed one at a time. Checked for every bit width, granularity,
// marker mode, dtype and role, with spans that are and are not whole blocks (win, groups, the
// fixed-boundary ablation and the online edges of the causal cache), the residual, odd and
// even channel counts, and the errors
// (NaN/Inf anywhere first, then a variance that overflows, then a range that does not fit).
// With rot=hadamard (fp16/bf16 input) the rotated rows, rounded to the input dtype, are coded
// the same way; the plain rules rotate the fp32 copy.
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/registry.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/dgq2/layout.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/schemes/dgq2/params.hpp"
#include "dgq/schemes/dgq2/range_store.hpp"
#include "dgq/schemes/dgq2/rotation_input.hpp"
#include "dgq/schemes/dgq2/segments.hpp"
#include "dgq/schemes/tensor_io.hpp"

using namespace dgq;
using namespace dgq::schemes;
using namespace dgq::test;

namespace {

dgq2::Params params_of(const std::string& spec) {
  dgq2::Params p;
  parse_scheme_args(spec, dgq2::dgq2_scheme_params(), [&](const SchemeArgs& a) { p = dgq2::params_from_args(a); });
  return p;
}

// The plain rules (docs/spec.md "DGQ v2", V1-V6) on a fp32 copy, one element at a time.
Compressed plain_compress(const std::string& spec, ConstTensor x, TensorRole role) {
  const dgq2::Params p = params_of(spec).for_role(role);
  check_finite(x, "dgq2");
  const std::vector<float> input = widen_checked(kernels::reference_kernels(), x, "dgq2");
  const std::int64_t d = x.channels, quantized = dgq2::quantized_tokens(x.tokens, p.residual);
  // Rule V0: the quantized rows rotated in fp32 and rounded to the input dtype.
  std::vector<float> v = input;
  if (p.rotate) dgq2::check_rotation_input(x, quantized, rules::hadamard_block(d, role == TensorRole::key));
  if (p.rotate && quantized > 0) {
    const int block = rules::hadamard_block(d, role == TensorRole::key);
    for (std::int64_t t = 0; t < quantized; ++t) hadamard_rotate_row(v.data() + t * d, d, block);
    std::vector<float> head(v.begin(), v.begin() + quantized * d);
    const OwnedTensor rounded = [&] {
      OwnedTensor r(x.dtype, quantized, d);
      narrow_into(kernels::reference_kernels(), head.data(), r.mut());
      return r;
    }();
    for (std::int64_t i = 0; i < quantized * d; ++i) v[i] = rounded.at(i);
  }
  const dgq2::RangeGranularity g = p.granularity(role);
  std::vector<std::uint32_t> edges{0};
  if (dgq2::uses_segments(g)) {
    edges = dgq2::choose_edges(p.rotate && p.segment_on_input ? input.data() : v.data(), quantized, d, p);
  } else if (quantized > 0) {
    edges.push_back(static_cast<std::uint32_t>(quantized));
  }
  const std::vector<dgq2::TokenSpan> spans = dgq2::range_spans(g, p.group(role), edges, quantized);
  const bool channelwise = dgq2::per_channel(g);
  const bool inband = p.seg.markers == Markers::inband;
  const int levels = p.levels(), offset = inband ? 1 : 0;
  std::vector<std::uint8_t> codes(dgq2::packed_code_bytes(static_cast<std::uint64_t>(quantized * d), p.bits), 0);
  std::vector<std::uint8_t> ranges;
  std::vector<float> lo(static_cast<std::size_t>(d)), inv(lo.size());
  for (const dgq2::TokenSpan& s : spans) {
    const std::int64_t count = channelwise ? d : 1;
    for (std::int64_t k = 0; k < count; ++k) {
      MinMax m;
      for (std::int64_t t = s.first; t < s.end; ++t) {
        for (std::int64_t j = 0; j < d; ++j) {
          if (!channelwise || j == k) m.add(v[t * d + j]);
        }
      }
      const dgq2::StoredRange r = dgq2::store_range(m, p.range_dtype, ranges, [&] {
        // The names the scheme gives: "token t", or "segment i (tokens a..b)", and the channel.
        std::size_t segment = 0;
        while (segment + 2 < edges.size() && edges[segment + 1] <= s.first) ++segment;
        const std::string where = g == dgq2::RangeGranularity::token
                                      ? "token " + std::to_string(s.first)
                                      : "segment " + std::to_string(segment) + " (tokens " + std::to_string(s.first) +
                                            ".." + std::to_string(s.end - 1) + ")";
        return channelwise ? where + ", channel " + std::to_string(k) : where;
      });
      lo[k] = r.lo;
      inv[k] = uniform_inverse(r.lo, r.hi, levels);
    }
    for (std::int64_t t = s.first; t < s.end; ++t) {
      for (std::int64_t j = 0; j < d; ++j) {
        const std::int64_t k = channelwise ? j : 0;
        auto u = static_cast<std::uint8_t>(uniform_code(v[t * d + j], lo[k], inv[k], levels) + offset);
        if (inband && j == 0 && t > 0 && std::find(edges.begin(), edges.end() - 1, t) != edges.end() - 1) {
          u = dgq2::inband_mark(u, p.bits);
        }
        dgq2::pack_codes(codes.data(), static_cast<std::uint64_t>(t * d + j), &u, 1, p.bits);
      }
    }
  }
  Compressed c;
  c.parts.push_back({"codes", std::move(codes)});
  c.parts.push_back({"ranges", std::move(ranges)});
  c.parts.push_back({"markers", dgq2::uses_segments(g) ? dgq2::marker_part(edges, quantized, p.seg.markers)
                                                       : std::vector<std::uint8_t>{}});
  const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
  const auto* raw = static_cast<const std::uint8_t*>(x.data);
  c.parts.push_back({"residual", std::vector<std::uint8_t>(raw + quantized * row_bytes, raw + x.tokens * row_bytes)});
  if (dgq2::uses_segments(g)) c.diagnostics.segments = SegmentDiagnostics{edges};
  return c;
}

// Rows whose spread steps up and down every few tokens, so that the variance rule cuts.
OwnedTensor stepped_tensor(std::int64_t l, std::int64_t d, DType t, std::uint64_t stream) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t tok = 0; tok < l; ++tok) {
    const float spread = (tok / 9) % 3 == 0 ? 0.5f : ((tok / 9) % 3 == 1 ? 6.0f : 2.0f);
    for (std::int64_t c = 0; c < d; ++c) v[tok * d + c] = 0.3f * static_cast<float>(c % 5) + spread * normal(gen);
  }
  return tensor_from(v, l, d, t);
}

void check_same(const Compressed& fast, const Compressed& plain) {
  REQUIRE(fast.parts.size() == plain.parts.size());
  for (std::size_t i = 0; i < plain.parts.size(); ++i) {
    CAPTURE(plain.parts[i].name);
    CHECK(fast.parts[i].name == plain.parts[i].name);
    CHECK(fast.parts[i].bytes == plain.parts[i].bytes);
  }
  CHECK(fast.segment_edges() == plain.segment_edges());
}

}  // namespace

TEST_CASE("dgq2 direct compress equals the plain rules on a fp32 copy, every config, dtype and role",
          "[scheme][dgq2][fast]") {
  const std::vector<std::string> specs{
      "dgq2:bits=4",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,markers=inband",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,markers=bitmap,kgran=segment,vgran=segment",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,kgran=segment-channel-group,kgroup=8,vgran=segment-channel-"
      "group,vgroup=5",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,boundaries=fixed,markers=inband,residual=5",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,kgran=token,vgran=segment-channel,range_dtype=fp32",
      "dgq2:bits=2,win=4,max_groups=12,budget=max_groups,markers=inband,kgran=segment-channel-group,kgroup=6",
      "dgq2:bits=3,win=4,max_groups=12,budget=max_groups,vgran=segment,residual=3",
      "dgq2:bits=8,win=4,max_groups=12,budget=max_groups,markers=inband,kgran=segment",
      "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,rot=hadamard,markers=inband,residual=3",
      "dgq2:bits=3,win=4,max_groups=12,budget=max_groups,rot=hadamard,seg_on=input,kgran=segment-channel-group,kgroup="
      "8",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,rot=hadamard,seg_on=input,vgran=segment",
      "dgq2:bits=4,win=4,max_groups=12,budget=max_groups,boundaries=online,kgran=segment-channel-group,kgroup=5,"
      "markers=inband,residual=3",
      "dgq2:bits=3,win=4,boundaries=online,rot=hadamard,markers=bitmap,vgran=segment",
  };
  std::uint64_t stream = 900;
  for (const std::string& spec : specs) {
    const auto scheme = make_scheme(spec);
    for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
      for (const std::int64_t l : {0, 1, 7, 33, 100, 301}) {
        for (const std::int64_t d : {1, 3, 8, 64, 128}) {
          for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
            if (dgq::test::spec_rotates(spec) && d % 64 != 0) continue;  // rotation needs D = 64k
            CAPTURE(spec, dtype_name(t), l, d, role == TensorRole::key ? "key" : "value");
            const OwnedTensor x = stepped_tensor(l, d, t, ++stream);
            check_same(scheme->compress(x.view(), role), plain_compress(spec, x.view(), role));
          }
        }
      }
    }
  }
}

TEST_CASE("dgq2 direct compress raises the plain rules' errors in their order", "[scheme][dgq2][fast][errors]") {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::int64_t l = 40, d = 8;
  for (const std::string spec : {"dgq2:bits=4,win=4", "dgq2:bits=4,win=4,residual=6", "dgq2:bits=4,kgran=token"}) {
    const auto scheme = make_scheme(spec);
    // huge: a variance that overflows fp32 (and a range wider than fp16); nan: a NaN; at tokens.
    for (const std::int64_t huge : {-1, 3, 37}) {
      for (const std::int64_t nan : {-1, 2, 20, 38}) {
        for (const std::string range : {"fp16", "fp32"}) {
          std::vector<float> v(static_cast<std::size_t>(l * d));
          for (std::int64_t i = 0; i < l * d; ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
          if (huge >= 0) {
            for (std::int64_t j = 0; j < d; ++j) v[huge * d + j] = j % 2 == 0 ? 3.0e38f : -3.0e38f;
          }
          if (nan >= 0) v[nan * d + 5] = std::nanf("");
          const OwnedTensor x = tensor_from(v, l, d, DType::f32);
          const std::string full = spec + ",range_dtype=" + range;
          const auto s = make_scheme(full);
          CAPTURE(full, huge, nan);
          CHECK(message([&] { (void)s->compress(x.view(), TensorRole::key); }) ==
                message([&] { (void)plain_compress(full, x.view(), TensorRole::key); }));
        }
      }
    }
    (void)scheme;
  }
}

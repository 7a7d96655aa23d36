// dgq2 (DGQ v2, docs/spec.md "DGQ v2"): the layout and byte count of every part against the
// rules written out here independently, the per-element error bound of rule V4/V5 on every
// element, the residual tokens bit for bit, in-band/table/bitmap markers, the fixed-boundary
// ablation, the rotation against the generic rot modifier, thread independence
// (markers and errors: test_scheme_dgq2_errors.cpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "test_scheme_dgq2_support.hpp"
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;
using namespace dgq::test::dgq2_tests;

namespace {

// What the test needs of a spec, read by the registry's generic parser (parse_spec: the declared
// keys, defaults and ranges), not by dgq2's own code, which is what the test checks.
struct Config {
  std::string spec;
  int bits = 0;
  std::string kgran, vgran, markers, range_dtype;
  std::int64_t kgroup = 0, vgroup = 0, residual = 0;
  int kbits = 0, vbits = 0;
  bool rotate = false;
  std::string rot_on;
  int bits_of(TensorRole role) const {
    const int own = role == TensorRole::key ? kbits : vbits;
    return own != 0 ? own : bits;
  }
  bool rotates(TensorRole role) const {
    return rotate && (rot_on == "kv" || rot_on == (role == TensorRole::key ? "k" : "v"));
  }
};

Config config_of(const std::string& spec) {
  Config c;
  c.spec = spec;
  const SchemeArgs args = parse_spec(spec).args;
  c.bits = args.integer("bits");
  c.kgran = args.word("kgran");
  c.vgran = args.word("vgran");
  c.markers = args.word("markers");
  c.range_dtype = args.word("range_dtype");
  c.kgroup = args.integer("kgroup");
  c.vgroup = args.integer("vgroup");
  c.residual = args.integer("residual");
  c.kbits = args.integer("kbits");
  c.vbits = args.integer("vbits");
  c.rotate = args.word("rot") == "hadamard";
  c.rot_on = args.word("rot_on");
  return c;
}

struct Span {
  std::int64_t first, end;
};

// Rule V3, written out: the token spans sharing ranges, in storage order.
std::vector<Span> spans_of(const std::string& gran, std::int64_t group, const std::vector<std::uint32_t>& edges,
                           std::int64_t quantized) {
  std::vector<Span> spans;
  if (gran == "token") {
    for (std::int64_t t = 0; t < quantized; ++t) spans.push_back({t, t + 1});
    return spans;
  }
  for (std::size_t s = 0; s + 1 < edges.size(); ++s) {
    const std::int64_t step = gran == "segment-channel-group" ? group : edges[s + 1] - edges[s];
    for (std::int64_t t = edges[s]; t < edges[s + 1]; t += step)
      spans.push_back({t, std::min<std::int64_t>(t + step, edges[s + 1])});
  }
  return spans;
}

bool channelwise(const std::string& gran) { return gran == "segment-channel" || gran == "segment-channel-group"; }

float stored_float(const std::vector<std::uint8_t>& bytes, std::size_t index, bool fp16) {
  if (fp16) {
    std::uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * index, 2);
    return rules::half_to_float(h);
  }
  float f;
  std::memcpy(&f, bytes.data() + 4 * index, 4);
  return f;
}

const std::vector<std::string> kConfigs{
    "dgq2",
    "dgq2:bits=2,kgran=segment-channel-group,kgroup=16,vgran=token,residual=5",
    "dgq2:bits=3,kgran=segment,vgran=segment-channel,markers=inband,range_dtype=fp32",
    "dgq2:bits=8,kgran=token,vgran=segment-channel-group,vgroup=7,markers=bitmap",
    "dgq2:bits=3,kgran=segment-channel,vgran=token,boundaries=fixed,residual=20,win=4",
    "dgq2:bits=4,kgran=segment-channel-group,kgroup=5,vgran=segment,markers=inband,win=8",
    "dgq2:kbits=4,vbits=2,kgran=segment-channel-group,kgroup=32,residual=3",
    "dgq2:bits=3,vbits=8,markers=inband,kgran=segment-channel,vgran=segment",
    "dgq2:bits=2,markers=inband,kgran=segment-channel,vgran=token,residual=2",
    "dgq2:bits=3,kgran=segment-channel-group,kgroup=16,vgran=segment,budget=max_groups,max_groups=12,win=4",
    "dgq2:bits=2,kgran=segment,vgran=segment-channel,markers=bitmap,budget=max_groups,max_groups=64,win=1",
};

// Checks every part of c against rules V1 and V3-V7 and every decoded element against the
// error bound.
void check_layout_and_bound(const Config& cfg, const OwnedTensor& x, TensorRole role, const Compressed& c,
                            const OwnedTensor& y) {
  const std::int64_t l = x.tokens, d = x.channels, quantized = std::max<std::int64_t>(l - cfg.residual, 0);
  const std::string gran = role == TensorRole::key ? cfg.kgran : cfg.vgran;
  const std::int64_t group = role == TensorRole::key ? cfg.kgroup : cfg.vgroup;
  const bool segments_used = gran != "token";
  // Segments: only for segmenting roles, covering [0, quantized).
  std::vector<std::uint32_t> edges = c.segment_edges();
  if (!segments_used) {
    CHECK(edges.empty());
    edges = quantized > 0 ? std::vector<std::uint32_t>{0, static_cast<std::uint32_t>(quantized)}
                          : std::vector<std::uint32_t>{0};
  } else {
    REQUIRE(!edges.empty());
    CHECK(edges.front() == 0);
    CHECK(edges.back() == static_cast<std::uint32_t>(quantized));
    for (std::size_t s = 1; s < edges.size(); ++s) CHECK(edges[s] > edges[s - 1]);
  }
  const std::int64_t segments = static_cast<std::int64_t>(edges.size()) - 1;
  const std::vector<Span> spans = spans_of(gran, group, edges, quantized);
  const std::int64_t per_span = channelwise(gran) ? d : 1;
  const bool fp16 = cfg.range_dtype == "fp16";
  const int bits = cfg.bits_of(role);
  CHECK(c.part_bytes("codes") == static_cast<std::uint64_t>((quantized * d * bits + 7) / 8));
  CHECK(c.part_bytes("ranges") == static_cast<std::uint64_t>(spans.size()) * per_span * (fp16 ? 4 : 8));
  std::uint64_t markers = 0;
  if (segments_used && cfg.markers == "table")
    markers = 4 * static_cast<std::uint64_t>(std::max<std::int64_t>(segments - 1, 0));
  if (segments_used && cfg.markers == "bitmap") markers = static_cast<std::uint64_t>((quantized + 7) / 8);
  CHECK(c.part_bytes("markers") == markers);
  CHECK(c.part_bytes("residual") == static_cast<std::uint64_t>((l - quantized) * d) * dtype_size(x.dtype));
  // docs/compressed-format.md: always these four parts, in this order, empty ones included.
  REQUIRE(c.parts.size() == 4);
  CHECK(c.parts[0].name == "codes");
  CHECK(c.parts[1].name == "ranges");
  CHECK(c.parts[2].name == "markers");
  CHECK(c.parts[3].name == "residual");
  // The tail comes back bit for bit.
  const std::size_t tail = static_cast<std::size_t>(quantized * d) * dtype_size(x.dtype);
  CHECK(std::equal(x.bytes.begin() + static_cast<std::ptrdiff_t>(tail), x.bytes.end(),
                   y.bytes.begin() + static_cast<std::ptrdiff_t>(tail)));
  if (cfg.rotates(role)) return;  // rotated: the bound holds in the rotated basis (checked elsewhere)
  // Every element of the quantized tokens within half a step of its range (+ rounding).
  // In-band markers reserve two codes in segmenting roles only (rule V5).
  const int levels = (1 << bits) - (cfg.markers == "inband" && segments_used ? 3 : 1);
  const std::vector<std::uint8_t>& ranges = c.find("ranges")->bytes;
  std::size_t r = 0;
  for (const Span& s : spans) {
    for (std::int64_t t = s.first; t < s.end; ++t) {
      for (std::int64_t j = 0; j < d; ++j) {
        const std::size_t k = r + static_cast<std::size_t>(per_span == 1 ? 0 : j);
        const float lo = stored_float(ranges, 2 * k, fp16), hi = stored_float(ranges, 2 * k + 1, fp16);
        const float xv = x.at(t * d + j), yv = y.at(t * d + j);
        CAPTURE(cfg.spec, role_name(role), t, j, lo, hi, xv, yv);
        REQUIRE(lo <= xv);
        REQUIRE(xv <= hi);
        const bool marked = cfg.markers == "inband" && segments_used && j == 0 && starts_segment(edges, t);
        if (marked) continue;  // the in-band marker's element (rule V6) is off by up to half the range
        REQUIRE(std::fabs(yv - xv) <= affine_bound(lo, hi, levels) + half_ulp(x.dtype, yv));
      }
    }
    r += static_cast<std::size_t>(per_span);
  }
}

}  // namespace

TEST_CASE("dgq2 edge shapes: 0 and 1 token, partial groups and blocks, the residual larger than the tensor",
          "[scheme][dgq2][edge]") {
  for (const std::string& spec : kConfigs) {
    const Config cfg = config_of(spec);
    const auto s = make_scheme(spec);
    CHECK(make_scheme(s->spec())->spec() == s->spec());
    for (const std::int64_t l : {0, 1, 4, 5, 15, 16, 17, 20, 21, 33, 64, 65}) {
      for (const std::int64_t d : {1, 3, 8, 64}) {
        for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
          CAPTURE(spec, l, d, role_name(role));
          const OwnedTensor x = random_tensor(l, d, 40 + static_cast<std::uint64_t>(l));
          const Compressed c = s->compress(x.view(), role);
          const OwnedTensor y = decompressed(*s, c);
          check_layout_and_bound(cfg, x, role, c, y);
          CHECK(c.total_bytes() <= s->planned_bytes(l, d, x.dtype, role));
        }
      }
    }
  }
}

TEST_CASE("dgq2 layout and error bound on every element, every config, dtype and role", "[scheme][dgq2][roundtrip]") {
  for (const std::string& spec : kConfigs) {
    const Config cfg = config_of(spec);
    const auto s = make_scheme(spec);
    for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        CAPTURE(spec, dtype_name(dtype), role_name(role));
        const OwnedTensor x = stepped_tensor(300, 40, 77, dtype);
        const Compressed c = s->compress(x.view(), role);
        const OwnedTensor y = decompressed(*s, c);
        check_layout_and_bound(cfg, x, role, c, y);
        const std::uint64_t planned = s->planned_bytes(x.tokens, x.channels, dtype, role);
        if (c.segment_edges().empty()) {
          CHECK(c.total_bytes() == planned);  // token granularity: no data-dependent size
        } else {
          CHECK(c.total_bytes() <= planned);
          CHECK(c.segment_edges().size() >= 3);  // the stepped spread makes v1 cut it
        }
      }
    }
  }
}

TEST_CASE("dgq2 error shrinks with the bits: 2, 3, 4, 8 on the same data", "[scheme][dgq2][roundtrip]") {
  const OwnedTensor x = random_tensor(256, 64, 91);
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    double previous = std::numeric_limits<double>::infinity();
    for (const int bits : {2, 3, 4, 8}) {
      const auto s = make_scheme("dgq2:bits=" + std::to_string(bits));
      const OwnedTensor y = decompressed(*s, s->compress(x.view(), role));
      double num = 0.0, den = 0.0;
      for (std::int64_t i = 0; i < x.size(); ++i) {
        num += (static_cast<double>(y.at(i)) - x.at(i)) * (static_cast<double>(y.at(i)) - x.at(i));
        den += static_cast<double>(x.at(i)) * x.at(i);
      }
      const double rel = std::sqrt(num / den);
      CAPTURE(bits, role_name(role), rel);
      // Each extra bit halves the step: the error must at least drop by a third.
      CHECK(rel < previous * 0.67);
      previous = rel;
    }
  }
}

TEST_CASE("dgq2 constant rows and tensors decode exactly; fp16 extremes stay finite", "[scheme][dgq2][edge]") {
  for (const std::string& spec : kConfigs) {
    const auto s = make_scheme(spec);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CAPTURE(spec, role_name(role));
      const OwnedTensor c7 = tensor_from(std::vector<float>(50 * 9, -7.25f), 50, 9);
      CHECK(decompressed(*s, s->compress(c7.view(), role)).bytes == c7.bytes);
      std::vector<float> extremes(50 * 9);
      for (std::size_t i = 0; i < extremes.size(); ++i)
        extremes[i] = i % 3 == 0 ? 65504.0f : (i % 3 == 1 ? -65504.0f : 0.0f);
      const OwnedTensor e = tensor_from(extremes, 50, 9);
      const OwnedTensor y = decompressed(*s, s->compress(e.view(), role));
      for (std::int64_t i = 0; i < y.size(); ++i) REQUIRE(std::isfinite(y.at(i)));
      CHECK(y.at(0) == 65504.0f);   // hi is exact (the fma of the top code)
      CHECK(y.at(1) == -65504.0f);  // lo is exact (code 0)
    }
  }
}

TEST_CASE("dgq2 bf16/fp32 values beyond fp16 need range_dtype=fp32", "[scheme][dgq2][errors]") {
  std::vector<float> v(20 * 4, 1.0f);
  v[13 * 4 + 2] = 1e6f;
  const OwnedTensor x = tensor_from(v, 20, 4, DType::f32);
  CHECK(error_message_of([&] { (void)make_scheme("dgq2:vgran=token")->compress(x.view(), TensorRole::value); }) ==
        "dgq2: value range of token 13 does not fit fp16 (|value| > 65504); use range_dtype=fp32");
  CHECK(
      error_message_of([&] { (void)make_scheme("dgq2:kgran=segment-channel")->compress(x.view(), TensorRole::key); }) ==
      "dgq2: value range of segment 0 (tokens 0..19), channel 2 does not fit fp16 (|value| > 65504); use "
      "range_dtype=fp32");
  const auto fp32 = make_scheme("dgq2:range_dtype=fp32");
  const OwnedTensor y = decompressed(*fp32, fp32->compress(x.view(), TensorRole::value));
  CHECK(std::fabs(y.at(13 * 4 + 2) - 1e6f) <= 0.5f * (1e6f - 1.0f) / 15.0f + 1.0f);
  // fp32 ranges that overflow are refused as in every family.
  std::vector<float> w(8, 0.0f);
  w[1] = 3e38f;
  w[2] = -3e38f;
  const OwnedTensor z = tensor_from(w, 2, 4, DType::f32);
  CHECK(error_message_of([&] { (void)fp32->compress(z.view(), TensorRole::value); }) ==
        "dgq2: value range of token 0 overflows fp32");
}

TEST_CASE("dgq2 bytes do not depend on the OpenMP thread count, for every config", "[scheme][dgq2][threads]") {
  const int before = omp_get_max_threads();
  for (const std::string& spec : kConfigs) {
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CAPTURE(spec, role_name(role));
      const auto s = make_scheme(spec);
      const OwnedTensor x = stepped_tensor(500, 64, 5, DType::f16);
      omp_set_num_threads(1);
      const Compressed one = s->compress(x.view(), role);
      const OwnedTensor y1 = decompressed(*s, one);
      omp_set_num_threads(4);
      const Compressed four = s->compress(x.view(), role);
      const OwnedTensor y4 = decompressed(*s, four);
      omp_set_num_threads(before);
      CHECK(one.parts == four.parts);
      CHECK(y1.bytes == y4.bytes);
    }
  }
}

TEST_CASE("dgq2 boundaries=fixed: the adaptive segment count at equal lengths, everything else equal",
          "[scheme][dgq2][ablation]") {
  for (const std::int64_t l : {0, 1, 31, 32, 200, 301, 1000}) {
    for (const std::string gran : {"segment", "segment-channel", "segment-channel-group"}) {
      CAPTURE(l, gran);
      const std::string base = "dgq2:bits=3,kgran=" + gran + ",kgroup=24,win=8";
      const auto adaptive = make_scheme(base);
      const auto fixed = make_scheme(base + ",boundaries=fixed");
      const OwnedTensor x = stepped_tensor(l, 32, 12, DType::f16);
      const Compressed a = adaptive->compress(x.view(), TensorRole::key);
      const Compressed f = fixed->compress(x.view(), TensorRole::key);
      REQUIRE(a.segment_edges().size() == f.segment_edges().size());
      const std::size_t s = f.segment_edges().size() - 1;
      for (std::size_t k = 0; k < f.segment_edges().size(); ++k) {
        CHECK(f.segment_edges()[k] ==
              static_cast<std::uint32_t>(k * static_cast<std::size_t>(l) / std::max<std::size_t>(s, 1)));
      }
      CHECK(f.part_bytes("markers") == a.part_bytes("markers"));
      CHECK(f.part_bytes("codes") == a.part_bytes("codes"));
      if (gran != std::string("segment-channel-group")) CHECK(f.part_bytes("ranges") == a.part_bytes("ranges"));
      if (l >= 200) CHECK(s >= 2);  // the stepped data is cut, so the ablation is not trivial
      check_layout_and_bound(config_of(base), x, TensorRole::key, f, decompressed(*fixed, f));
    }
  }
}

TEST_CASE("dgq2 budget=max_groups: up to max_groups segments at any length, v1's length rule otherwise",
          "[scheme][dgq2][budget]") {
  const OwnedTensor x = stepped_tensor(1024, 32, 61, DType::f16);  // a spread step every 48 tokens
  const auto segments = [&](const std::string& spec) {
    return make_scheme(spec)->compress(x.view(), TensorRole::key).segment_edges().size() - 1;
  };
  CHECK(segments("dgq2:max_groups=8") == 2);  // v1 rule 4: 2 segments below 2048 tokens
  CHECK(segments("dgq2:max_groups=8,budget=max_groups") == 8);
  CHECK(segments("dgq2:max_groups=20,budget=max_groups") == 20);
  // At most one segment per block: 16 blocks of 64, every ratio below group_ratio=1 a candidate.
  CHECK(segments("dgq2:max_groups=64,budget=max_groups,win=64,group_ratio=1") == 16);
  // With the same budget the edges are v1's rule 5: budget=length is exactly dgq's selection.
  const Compressed v2 = make_scheme("dgq2:max_groups=3")->compress(x.view(), TensorRole::key);
  const Compressed v1 = make_scheme("dgq:max_groups=3")->compress(x.view(), TensorRole::key);
  CHECK(v2.segment_edges() == v1.segment_edges());
  // The fixed ablation follows the count whatever the budget.
  CHECK(make_scheme("dgq2:max_groups=20,budget=max_groups,boundaries=fixed")
            ->compress(x.view(), TensorRole::key)
            .segment_edges()
            .size() == 21);
  CHECK(error_message_of([] { (void)make_scheme("dgq2:budget=all"); }) ==
        "dgq2: parameter 'budget' = 'all' is not one of length, max_groups");
}

TEST_CASE("dgq2 rot=hadamard,seg_on=rotated is the generic rot modifier around dgq2:rot=none, byte for byte",
          "[scheme][dgq2][rotation]") {
  const SchemeModifier* rot = nullptr;
  for (const SchemeModifier& m : scheme_modifier_list()) {
    if (m.key == "rot") rot = &m;
  }
  REQUIRE(rot != nullptr);
  for (const std::string inner : {"dgq2:bits=4", "dgq2:bits=3,kgran=segment-channel-group,kgroup=32,markers=inband",
                                  "dgq2:bits=2,kgran=segment,vgran=segment-channel,markers=bitmap"}) {
    const auto wrapped = rot->wrap(make_scheme(inner), "hadamard", Device::cpu);
    const auto own = make_scheme(inner + ",rot=hadamard,seg_on=rotated");
    for (const DType dtype : {DType::f16, DType::f32}) {
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        CAPTURE(inner, dtype_name(dtype), role_name(role));
        const OwnedTensor x = stepped_tensor(333, 128, 21, dtype);
        const Compressed a = wrapped->compress(x.view(), role);
        const Compressed b = own->compress(x.view(), role);
        CHECK(a.parts == b.parts);
        CHECK(a.segment_edges() == b.segment_edges());
        CHECK(decompressed(*wrapped, a).bytes == decompressed(*own, b).bytes);
      }
    }
  }
}

TEST_CASE("dgq2 seg_on=input cuts where dgq2 without rotation cuts; the residual stays unrotated",
          "[scheme][dgq2][rotation]") {
  const OwnedTensor x = stepped_tensor(400, 64, 33, DType::f16);
  const auto plain = make_scheme("dgq2:bits=4,residual=10");
  const auto on_input = make_scheme("dgq2:bits=4,residual=10,rot=hadamard,seg_on=input");
  const Compressed p = plain->compress(x.view(), TensorRole::key);
  const Compressed r = on_input->compress(x.view(), TensorRole::key);
  CHECK(r.segment_edges() == p.segment_edges());
  CHECK(r.find("markers")->bytes == p.find("markers")->bytes);
  CHECK(r.find("residual")->bytes == p.find("residual")->bytes);
  CHECK(r.find("codes")->bytes != p.find("codes")->bytes);  // the codes are of the rotated rows
  // Rotation needs head_dim a multiple of 64, as llama.cpp's.
  const OwnedTensor odd = random_tensor(10, 96 + 1, 3);
  CHECK(error_message_of([&] { (void)on_input->compress(odd.view(), TensorRole::value); }) ==
        "dgq2: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got 97");
}

TEST_CASE("dgq2 kbits/vbits and rot_on: each role is the single-width, single-rotation scheme of its own",
          "[scheme][dgq2][rotation]") {
  const OwnedTensor x = stepped_tensor(260, 128, 44, DType::f16);
  const std::string base = "dgq2:kgran=segment-channel-group,kgroup=32,vgran=token,residual=4";
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    CAPTURE(role_name(role));
    const bool key = role == TensorRole::key;
    // kbits=4,vbits=2 stores K as bits=4 and V as bits=2.
    const Compressed mixed = make_scheme(base + ",kbits=4,vbits=2")->compress(x.view(), role);
    CHECK(mixed.parts == make_scheme(base + ",bits=" + (key ? "4" : "2"))->compress(x.view(), role).parts);
    // rot_on=v rotates V only; rot_on=k K only.
    for (const std::string on : {"k", "v"}) {
      CAPTURE(on);
      const bool rotated = (on == "k") == key;
      const Compressed one = make_scheme(base + ",rot=hadamard,rot_on=" + on)->compress(x.view(), role);
      const Compressed expected = make_scheme(base + (rotated ? ",rot=hadamard" : ""))->compress(x.view(), role);
      CHECK(one.parts == expected.parts);
    }
  }
  CHECK(error_message_of([] { (void)make_scheme("dgq2:kbits=5"); }) ==
        "dgq2: parameter 'kbits' = '5' is not one of 0, 2, 3, 4, 8");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:rot_on=q"); }) ==
        "dgq2: parameter 'rot_on' = 'q' is not one of kv, k, v");
}

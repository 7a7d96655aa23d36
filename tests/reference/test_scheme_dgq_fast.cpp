// The dgq Scheme decodes straight from its "codes" part (detail::dgq_decode_codes) instead of
// copying the codes into a DgqV1Encoded for dgq_decode. Both must give the same bytes, or the
// same error, for stored data the encoder never makes: random codes including the in-band
// marker values, ranges with zeros, subnormals and extremes, every marker mode and
// granularity, f16/bf16/f32 outputs, and corrupt markers.
#include "test_scheme_support.hpp"

#include <algorithm>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

struct Mode {
  Granularity granularity;
  Markers markers;
  std::string spec;
};

const std::vector<Mode> kFastModes{
    {Granularity::segment, Markers::table, "granularity=segment,markers=table"},
    {Granularity::segment, Markers::bitmap, "granularity=segment,markers=bitmap"},
    {Granularity::segment, Markers::inband, "granularity=segment,markers=inband"},
    {Granularity::segment_channel, Markers::table, "granularity=segment-channel,markers=table"},
    {Granularity::segment_channel, Markers::bitmap, "granularity=segment-channel,markers=bitmap"},
    {Granularity::segment_channel, Markers::inband, "granularity=segment-channel,markers=inband"}};

// Range endpoints that stress rule 7's arithmetic: zeros, subnormals, .5 steps, extremes.
float adversarial_endpoint(std::mt19937_64& gen) {
  static const float pool[] = {0.0f,    -0.0f,    1e-45f,    -1e-45f, 1.17e-38f, 0.5f, -0.5f, 126.5f,
                               -253.0f, 65504.0f, -65504.0f, 3.0e38f, -3.0e38f,  1.0f, -1.0f, 0.1f};
  if (gen() % 3 == 0) return std::uniform_real_distribution<float>(-10.0f, 10.0f)(gen);
  return pool[gen() % (sizeof(pool) / sizeof(pool[0]))];
}

// A DgqV1Encoded as a decoder may receive it: `interior` edges stored in the mode's form, any
// code values (channel 0 carries markers exactly at the edges in in-band mode).
DgqV1Encoded stored_data(std::int64_t l, std::int64_t d, DType dt, const Mode& mode,
                         const std::vector<std::uint32_t>& interior, std::mt19937_64& gen) {
  DgqV1Encoded enc;
  enc.tokens = l;
  enc.channels = d;
  enc.dtype = dt;
  enc.params.win = 1;
  enc.params.max_groups = 8;
  enc.params.granularity = mode.granularity;
  enc.params.markers = mode.markers;
  enc.segments = static_cast<int>(interior.size()) + 1;
  enc.codes.resize(static_cast<std::size_t>(l * d));
  for (auto& c : enc.codes) c = static_cast<std::int8_t>(gen() & 0xff);
  if (mode.markers == Markers::inband) {
    for (std::int64_t t = 0; t < l; ++t) {
      std::int8_t& c = enc.codes[t * d];
      const bool edge = std::find(interior.begin(), interior.end(), static_cast<std::uint32_t>(t)) != interior.end();
      if (edge)
        c = rules::inband_mark(c);
      else if (rules::is_inband_marker(c))
        c = 0;
    }
  } else if (mode.markers == Markers::table) {
    enc.boundaries = interior;
  } else {
    enc.bitmap.assign(static_cast<std::size_t>((l + 7) / 8), 0);
    int parity = 0;
    for (std::int64_t t = 0; t < l; ++t) {
      if (std::find(interior.begin(), interior.end(), static_cast<std::uint32_t>(t)) != interior.end()) parity ^= 1;
      if (parity != 0) enc.bitmap[t / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
    }
  }
  const std::int64_t C = mode.granularity == Granularity::segment_channel ? d : 1;
  for (std::int64_t i = 0; i < enc.segments * C; ++i) {
    float a = adversarial_endpoint(gen), b = adversarial_endpoint(gen);
    if (a > b) std::swap(a, b);
    enc.lo.push_back(a);
    enc.hi.push_back(b);
  }
  return enc;
}

Compressed as_parts(const DgqV1Encoded& enc, const Scheme& s) {
  Compressed c;
  c.scheme = s.spec();
  c.tokens = enc.tokens;
  c.channels = enc.channels;
  c.dtype = enc.dtype;
  c.parts.push_back({"codes", std::vector<std::uint8_t>(enc.codes.begin(), enc.codes.end())});
  std::vector<std::uint8_t> ranges(enc.lo.size() * 8);
  for (std::size_t i = 0; i < enc.lo.size(); ++i) {
    std::memcpy(ranges.data() + 8 * i, &enc.lo[i], 4);
    std::memcpy(ranges.data() + 8 * i + 4, &enc.hi[i], 4);
  }
  c.parts.push_back({"ranges", std::move(ranges)});
  if (enc.params.markers == Markers::table) {
    std::vector<std::uint8_t> b(enc.boundaries.size() * 4);
    if (!b.empty()) std::memcpy(b.data(), enc.boundaries.data(), b.size());
    c.parts.push_back({"boundaries", std::move(b)});
  } else if (enc.params.markers == Markers::bitmap) {
    c.parts.push_back({"bitmap", enc.bitmap});
  }
  return c;
}

// The message dgq_decode (or the scheme) throws, or "" with the output bytes in `out`.
template <class Decode>
std::string decode_or_message(Decode decode, OwnedTensor& out) {
  try {
    decode(out.mut());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void require_same_as_dgq_decode(const DgqV1Encoded& enc, const Mode& mode) {
  const auto s = make_scheme("dgq:win=1,max_groups=8," + mode.spec);
  const Compressed c = as_parts(enc, *s);
  OwnedTensor expected(enc.dtype, enc.tokens, enc.channels), got(enc.dtype, enc.tokens, enc.channels);
  std::memset(expected.bytes.data(), 0x5a, expected.bytes.size());
  std::memset(got.bytes.data(), 0x5a, got.bytes.size());
  const std::string want = decode_or_message([&](MutTensor out) { dgq_decode(enc, out); }, expected);
  const std::string have = decode_or_message([&](MutTensor out) { s->decompress(c, out); }, got);
  CHECK(have == want);
  if (want.empty()) CHECK(got.bytes == expected.bytes);
}

std::vector<std::uint32_t> random_interior(std::int64_t l, std::mt19937_64& gen) {
  // Within rule 4's budget, which the scheme checks against the ranges before decoding.
  std::vector<std::uint32_t> interior;
  const int budget = rules::segment_budget(l, 8, 1);
  const int wanted = static_cast<int>(gen() % static_cast<std::uint64_t>(budget));
  for (int i = 0; i < wanted && l > 1; ++i) interior.push_back(static_cast<std::uint32_t>(1 + gen() % (l - 1)));
  std::sort(interior.begin(), interior.end());
  interior.erase(std::unique(interior.begin(), interior.end()), interior.end());
  return interior;
}

}  // namespace

TEST_CASE("dgq scheme decompress from its parts equals dgq_decode on arbitrary stored codes and ranges",
          "[scheme][dgq][fast]") {
  auto gen = rng(4242);
  for (const Mode& mode : kFastModes) {
    for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
      for (std::int64_t l = 1; l <= 300; l += (l < 40 ? 1 : 37)) {
        for (const std::int64_t d : {1, 3, 31, 33, 128}) {
          CAPTURE(mode.spec, dtype_name(dt), l, d);
          const DgqV1Encoded enc = stored_data(l, d, dt, mode, random_interior(l, gen), gen);
          require_same_as_dgq_decode(enc, mode);
        }
      }
    }
  }
}

TEST_CASE("dgq scheme decompress from its parts reports corrupt markers as dgq_decode does", "[scheme][dgq][fast]") {
  auto gen = rng(4343);
  for (const Mode& mode : kFastModes) {
    CAPTURE(mode.spec);
    const std::int64_t l = 40, d = 5;
    DgqV1Encoded enc = stored_data(l, d, DType::f16, mode, {10}, gen);
    if (mode.markers == Markers::table) {
      enc.boundaries = {static_cast<std::uint32_t>(l)};  // not inside (0, tokens)
    } else if (mode.markers == Markers::bitmap) {
      enc.bitmap[0] |= 1u;  // token 0 in an odd segment
    } else {
      enc.codes[0] = rules::kMarkerHigh;  // a marker at token 0
    }
    const auto s = make_scheme("dgq:win=1,max_groups=8," + mode.spec);
    OwnedTensor a(DType::f16, l, d), b(DType::f16, l, d);
    const std::string want = decode_or_message([&](MutTensor out) { dgq_decode(enc, out); }, a);
    REQUIRE_THAT(want, Catch::Matchers::Contains("corrupt DGQ data"));
    CHECK(decode_or_message([&](MutTensor out) { s->decompress(as_parts(enc, *s), out); }, b) == want);

    // More ranges than the markers describe: both name the segment counts. (In table mode the
    // scheme sizes "boundaries" by the ranges first, before any decoding.)
    if (mode.markers == Markers::table) continue;
    DgqV1Encoded extra = stored_data(l, d, DType::f16, mode, {}, gen);
    const std::int64_t C = mode.granularity == Granularity::segment_channel ? d : 1;
    extra.segments += 1;
    for (std::int64_t i = 0; i < C; ++i) {
      extra.lo.push_back(0.0f);
      extra.hi.push_back(1.0f);
    }
    const std::string want_count = decode_or_message([&](MutTensor out) { dgq_decode(extra, out); }, a);
    REQUIRE_THAT(want_count, Catch::Matchers::Contains("segments"));
    CHECK(decode_or_message([&](MutTensor out) { s->decompress(as_parts(extra, *s), out); }, b) == want_count);
  }
}

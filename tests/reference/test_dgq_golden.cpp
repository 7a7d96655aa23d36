// Golden vectors: FNV-1a 64 digests of the stored parts for fixed inputs (splitmix64 data).
// Any change of these bytes is a change of DGQ v1 and must come with a spec change.
// Regenerate (after such a change only) with:
//   DGQ_PRINT_GOLDEN=1 ./build-ref/tests/test_reference "[golden]"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "dgq/dgq.hpp"
#include "test_dgq_support.hpp"

namespace {

struct DgqV1Golden {
  const char* name;
  dgq::DType dtype;
  std::int64_t tokens, channels;
  std::uint64_t seed;
  dgq::Granularity granularity;
  dgq::Markers markers;
  const char* digest;  // hex FNV-1a over codes, lo, hi, boundaries, bitmap (in this order)
};

float golden_amplitude(std::int64_t t) { return t < 1024 ? 1.5f : (t < 3072 ? 12.0f : 0.2f); }

std::string digest_of(const dgq::DgqV1Encoded& e) {
  std::uint64_t h = dgq::test::fnv1a(e.codes.data(), e.codes.size());
  h = dgq::test::fnv1a(e.lo.data(), e.lo.size() * sizeof(float), h);
  h = dgq::test::fnv1a(e.hi.data(), e.hi.size() * sizeof(float), h);
  h = dgq::test::fnv1a(e.boundaries.data(), e.boundaries.size() * sizeof(std::uint32_t), h);
  h = dgq::test::fnv1a(e.bitmap.data(), e.bitmap.size(), h);
  return dgq::test::hex64(h);
}

}  // namespace

TEST_CASE("golden vectors: digests of codes and ranges for fixed inputs", "[dgq][golden]") {
  const DgqV1Golden cases[] = {
      {"f16-segment-table", dgq::DType::f16, 4096, 128, 1, dgq::Granularity::segment, dgq::Markers::table,
       "cae91a7d9022482d"},
      {"f16-channel-bitmap", dgq::DType::f16, 4096, 128, 2, dgq::Granularity::segment_channel, dgq::Markers::bitmap,
       "c09e226cae7651db"},
      {"bf16-segment-inband", dgq::DType::bf16, 3333, 80, 3, dgq::Granularity::segment, dgq::Markers::inband,
       "a0d270d37d3ed0c3"},
      {"f32-channel-table", dgq::DType::f32, 1500, 33, 4, dgq::Granularity::segment_channel, dgq::Markers::table,
       "063442693d7f9069"},
  };
  const bool print = std::getenv("DGQ_PRINT_GOLDEN") != nullptr;
  for (const DgqV1Golden& g : cases) {
    CAPTURE(g.name);
    const auto x = dgq::test::random_tensor(g.dtype, g.tokens, g.channels, g.seed, golden_amplitude);
    const auto enc = dgq::dgq_encode(x.view(), dgq::test::params_with(g.granularity, g.markers));
    const std::string digest = digest_of(enc);
    if (print) std::cout << g.name << " " << digest << " segments=" << enc.segments << "\n";
    CHECK(digest == g.digest);
  }
}

// Golden vectors of DGQ v2: FNV-1a 64 digests of every stored part (in part order: codes,
// ranges, markers, residual) for fixed splitmix64 inputs. Any change of these bytes is a change
// of DGQ v2 and must come with a change of docs/spec.md ("DGQ v2"). v1's digests are pinned
// separately (test_dgq_golden.cpp) and dgq2 shares no code path that writes them.
// Regenerate (after such a change only) with:
//   DGQ_PRINT_GOLDEN=1 build/tests/test_reference "[dgq2][golden]"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "dgq/scheme.hpp"
#include "test_dgq_support.hpp"

namespace {

struct Dgq2Golden {
  const char* spec;
  dgq::DType dtype;
  dgq::TensorRole role;
  std::uint64_t seed;
  const char* digest;
  std::size_t segments;  // segment_edges.size() - 1, or 0 for a role that does not segment
};

// Spread steps at tokens 800 and 1800: v1's rule (budget 3 at >= 2048 tokens) cuts there.
float amplitude(std::int64_t t) { return t < 800 ? 1.5f : (t < 1800 ? 12.0f : 0.2f); }

}  // namespace

TEST_CASE("dgq2 golden vectors: digests of the stored parts for fixed inputs", "[dgq2][golden]") {
  using dgq::DType;
  using dgq::TensorRole;
  const Dgq2Golden cases[] = {
      {"dgq2:bits=4", DType::f16, TensorRole::key, 11, "7fc6126c7cf4d65c", 3},
      {"dgq2:bits=4", DType::f16, TensorRole::value, 12, "c4b5c3da1de3b983", 0},
      {"dgq2:bits=3,kgran=segment-channel-group,kgroup=32,residual=32", DType::f16, TensorRole::key, 13,
       "9405f8590c9a4d81", 3},
      {"dgq2:bits=2,kgran=segment,vgran=segment-channel,markers=inband,range_dtype=fp32", DType::bf16,
       TensorRole::value, 14, "a5c2afe610b1756b", 3},
      {"dgq2:bits=8,markers=bitmap,boundaries=fixed,rot=hadamard,seg_on=input", DType::f32, TensorRole::key, 15,
       "42ab4a8f59020ae7", 3},
      {"dgq2:bits=3,vgran=segment-channel-group,vgroup=48,rot=hadamard,seg_on=rotated,residual=100", DType::f16,
       TensorRole::value, 16, "439c113669886318", 3},
  };
  const bool print = std::getenv("DGQ_PRINT_GOLDEN") != nullptr;
  for (const Dgq2Golden& g : cases) {
    CAPTURE(g.spec, dgq::dtype_name(g.dtype), dgq::role_name(g.role));
    const auto x = dgq::test::random_tensor(g.dtype, 2500, 64, g.seed, amplitude);
    const dgq::Compressed c = dgq::make_scheme(g.spec)->compress(x.view(), g.role);
    const std::string digest = dgq::test::parts_digest(c);
    const std::size_t segments = c.segment_edges().empty() ? 0 : c.segment_edges().size() - 1;
    if (print) {
      std::cout << g.spec << " " << dgq::dtype_name(g.dtype) << " " << dgq::role_name(g.role) << " " << digest
                << " segments=" << segments << "\n";
    }
    CHECK(digest == g.digest);
    CHECK(segments == g.segments);
  }
}

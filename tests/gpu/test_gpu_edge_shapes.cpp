// Reference vs CUDA on every edge shape of the reference tests: tokens one off either side of
// block and warp edges, channels one off either side of the warp width, and the empty tensor.
#include <catch2/catch.hpp>

#include "gpu_compare.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

TEST_CASE("gpu: empty and single-token tensors match the reference", "[gpu][shapes]") {
  for (std::int64_t D : {1, 31, 32, 33, 256}) {
    for (std::int64_t L : {0, 1}) {
      CAPTURE(L, D);
      const std::vector<HostUnit> units{make_unit(DType::f16, L, D, normal_pattern(test::seed() + D))};
      REQUIRE(differential_mismatch("empty_single", units, DgqV1Params{}) == "");
    }
  }
}

TEST_CASE("gpu: every edge shape matches the reference byte for byte", "[gpu][shapes]") {
  const std::int64_t tokens[] = {0, 1, 15, 16, 17, 31, 32, 33, 2047, 2048, 16384};
  const std::int64_t channels[] = {1, 31, 32, 33, 64, 80, 128, 256};
  for (const std::int64_t L : tokens) {
    for (const std::int64_t D : channels) {
      CAPTURE(L, D, test::seed());
      // Two units per batch so that unit offsets are exercised as well.
      const std::vector<HostUnit> units{make_unit(DType::f16, L, D, variance_steps(test::seed() + L * 1000 + D, 48)),
                                        make_unit(DType::f16, L, D, normal_pattern(test::seed() + L * 1000 + D + 1))};
      REQUIRE(differential_mismatch("edge_shapes", units, DgqV1Params{}) == "");
    }
  }
}

TEST_CASE("gpu: long contexts (>= 131072 tokens, partial last block) match the reference", "[gpu][shapes]") {
  const std::int64_t L = 131072 + 3;
  const std::vector<HostUnit> units{make_unit(DType::f16, L, 128, variance_steps(test::seed() + 7, 4096)),
                                    make_unit(DType::f16, L, 128, normal_pattern(test::seed() + 8))};
  DgqV1Params p;
  p.max_groups = 8;
  REQUIRE(differential_mismatch("long_context", units, p) == "");
}

TEST_CASE("gpu: a batch mixing shapes and dtypes matches the reference unit by unit", "[gpu][shapes]") {
  const std::vector<HostUnit> units{make_unit(DType::f16, 100, 33, normal_pattern(test::seed() + 11)),
                                    make_unit(DType::f32, 2049, 64, variance_steps(test::seed() + 12, 300)),
                                    make_unit(DType::bf16, 100, 33, outlier_channels(test::seed() + 13)),
                                    make_unit(DType::f16, 0, 8, normal_pattern(test::seed() + 14)),
                                    make_unit(DType::f16, 100, 33, constant_rows(test::seed() + 15))};
  REQUIRE(differential_mismatch("mixed_batch", units, DgqV1Params{}) == "");
}

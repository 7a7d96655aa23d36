// Reference vs CUDA on the value patterns where a reduction order or a rounding rule would
// show: outliers, variance steps, constant rows, fp16 extremes and subnormals, fp32 denormals,
// in all three dtypes.
#include <catch2/catch.hpp>

#include "gpu_compare.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

namespace {

struct NamedPattern {
  const char* name;
  Pattern pattern;
};

std::vector<NamedPattern> patterns(std::uint64_t seed) {
  return {{"normal", normal_pattern(seed)},
          {"normal_tiny", normal_pattern(seed + 1, 1e-3f)},
          {"variance_steps", variance_steps(seed + 2, 200)},
          {"outlier_channels", outlier_channels(seed + 3)},
          {"constant_rows", constant_rows(seed + 4)},
          {"all_equal", all_equal(1.5f)},
          {"all_zero", all_equal(0.0f)},
          {"fp16_extremes", fp16_extremes(seed + 5)}};
}

}  // namespace

TEST_CASE("gpu: value patterns match the reference in fp16, bf16 and fp32", "[gpu][values]") {
  for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
    for (const auto& [name, pattern] : patterns(test::seed())) {
      for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
        CAPTURE(dtype_name(dtype), name, granularity_name(g), test::seed());
        DgqV1Params p;
        p.granularity = g;
        const std::vector<HostUnit> units{make_unit(dtype, 3001, 96, pattern), make_unit(dtype, 3001, 96, pattern)};
        REQUIRE(differential_mismatch(std::string("patterns_") + name, units, p) == "");
      }
    }
  }
}

TEST_CASE("gpu: fp32 denormal inputs are kept, not flushed, exactly like the reference", "[gpu][values]") {
  for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
    DgqV1Params p;
    p.granularity = g;
    p.min_var = 0.0f;
    const std::vector<HostUnit> units{make_unit(DType::f32, 517, 40, fp32_denormals(test::seed() + 21))};
    REQUIRE(differential_mismatch("fp32_denormals", units, p) == "");
  }
}

TEST_CASE("gpu: random normal tensors over many seeds match the reference", "[gpu][values]") {
  Rng shapes(test::seed() + 99);
  for (int i = 0; i < 40; ++i) {
    const std::int64_t L = static_cast<std::int64_t>(shapes.next() % 5000);
    const std::int64_t D = 1 + static_cast<std::int64_t>(shapes.next() % 256);
    const DType dtype = static_cast<DType>(shapes.next() % 3);
    CAPTURE(i, L, D, dtype_name(dtype), test::seed());
    const std::vector<HostUnit> units{make_unit(dtype, L, D, variance_steps(test::seed() + 1000 + i, 16 + i * 7))};
    REQUIRE(differential_mismatch("random_" + std::to_string(i), units, DgqV1Params{}) == "");
  }
}

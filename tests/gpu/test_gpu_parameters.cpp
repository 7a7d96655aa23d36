// Reference vs CUDA on every parameter corner: group_ratio 0.5/0.75/1.0, min_var 0 and large,
// max_groups 1..8, both granularities, all marker modes, and a few block widths.
#include <catch2/catch.hpp>

#include "gpu_compare.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

TEST_CASE("gpu: every ratio x min_var x granularity x markers corner matches the reference", "[gpu][params]") {
  const std::vector<HostUnit> units{make_unit(DType::f16, 3000, 40, variance_steps(test::seed() + 31, 160)),
                                    make_unit(DType::f16, 3000, 40, outlier_channels(test::seed() + 32))};
  for (const float ratio : {0.5f, 0.75f, 1.0f}) {
    for (const float min_var : {0.0f, 0.05f, 1e6f}) {
      for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
        for (const Markers m : {Markers::table, Markers::bitmap, Markers::inband}) {
          DgqV1Params p;
          p.group_ratio = ratio;
          p.min_var = min_var;
          p.granularity = g;
          p.markers = m;
          CAPTURE(p.to_string());
          REQUIRE(differential_mismatch("corners", units, p) == "");
        }
      }
    }
  }
}

TEST_CASE("gpu: max_groups 1..8 with every marker mode matches the reference at 64K+ tokens", "[gpu][params]") {
  // rule(L) = 8 from L = 65536 on, so every max_groups value is the binding budget.
  const std::vector<HostUnit> units{make_unit(DType::f16, 65536 + 5, 33, variance_steps(test::seed() + 41, 2000))};
  for (int groups = 1; groups <= 8; ++groups) {
    for (const Markers m : {Markers::table, Markers::bitmap, Markers::inband}) {
      for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
        DgqV1Params p;
        p.max_groups = groups;
        p.markers = m;
        p.granularity = g;
        CAPTURE(p.to_string());
        REQUIRE(differential_mismatch("max_groups", units, p) == "");
      }
    }
  }
}

TEST_CASE("gpu: block widths other than 16 match the reference", "[gpu][params]") {
  const std::vector<HostUnit> units{make_unit(DType::bf16, 4099, 64, variance_steps(test::seed() + 51, 100))};
  for (const int win : {1, 7, 16, 64, 5000}) {
    DgqV1Params p;
    p.win = win;
    p.markers = Markers::bitmap;
    CAPTURE(p.to_string());
    REQUIRE(differential_mismatch("win", units, p) == "");
  }
}

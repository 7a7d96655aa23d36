// Layer plans (sim/eval/src/cache/layer_plan.hpp, docs/eval.md "Layer plans"): parsing, errors that
// name the spec, and the canonical text (merged, sorted, ranges, the default's layers dropped).
#include <catch2/catch.hpp>

#include "cache/layer_plan.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/cache_settings.hpp"

using namespace dgq;
using sim::split_layer_plan;

TEST_CASE("a spec without ';' is not a layer plan") {
  CHECK_FALSE(split_layer_plan("q4_0").has_value());
  CHECK_FALSE(split_layer_plan("q8_0/q4_0").has_value());
  CHECK_FALSE(split_layer_plan("").has_value());
}

TEST_CASE("a layer plan's overrides: lists, ranges, any cache spec after the first '='") {
  const auto plan = split_layer_plan("q8_0;3-5,1=q4_0;0=dgq3:kbits=5,vbits=3;7=fp32/q4_0");
  REQUIRE(plan.has_value());
  CHECK(plan->default_spec == "q8_0");
  REQUIRE(plan->overrides.size() == 3);
  CHECK(plan->overrides[0].layers == std::vector<std::int64_t>{1, 3, 4, 5});
  CHECK(plan->overrides[0].spec == "q4_0");
  CHECK(plan->overrides[1].spec == "dgq3:kbits=5,vbits=3");
  CHECK(plan->overrides[1].layers == std::vector<std::int64_t>{0});
  CHECK(plan->overrides[2].spec == "fp32/q4_0");
}

TEST_CASE("bad layer plans are errors naming the spec and the part at fault") {
  CHECK_THROWS_WITH(split_layer_plan(";0=q4_0"), Catch::Contains("the default cache is empty"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;"), Catch::Contains("override '' is not LAYERS=SPEC"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;q4_0"), Catch::Contains("override 'q4_0' is not LAYERS=SPEC"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;0="), Catch::Contains("is not LAYERS=SPEC"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;=q4_0"), Catch::Contains("is not LAYERS=SPEC"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;1,,2=q4_0"), Catch::Contains("layer '' is not a layer index"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;-1=q4_0"), Catch::Contains("layer '' is not a layer index"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;5-3=q4_0"), Catch::Contains("layer range '5-3' runs backwards"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;1-3=q4_0;2=q5_0"), Catch::Contains("layer 2 is listed twice"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;1234567=q4_0"), Catch::Contains("'1234567' is not a layer index"));
  CHECK_THROWS_WITH(split_layer_plan("q8_0;x=q4_0"), Catch::Contains("cache spec 'q8_0;x=q4_0'"));
}

TEST_CASE("the canonical text of a layer plan merges, sorts, writes ranges and drops the default's layers") {
  CHECK(sim::canonical_cache_spec("q8_0;5=q4_0;0-1,3=q4_0:rot=none;2=q8_0") == "q8_0;0-1,3,5=q4_0");
  CHECK(sim::canonical_cache_spec("q4_0;0=q4_0") == "q4_0");  // nothing left: the default alone
  CHECK(sim::canonical_cache_spec("f32;1=q8_0/q8_0") == "fp32;1=q8_0");
  CHECK(sim::canonical_cache_spec("q8_0;2=q5_0;0=q4_0") == "q8_0;0=q4_0;2=q5_0");
  CHECK(sim::canonical_cache_spec("q8_0;0=kivi-4") == "q8_0;0=kivi-4:group=32,residual=32");
  CHECK_THROWS_AS(sim::canonical_cache_spec("q8_0;0=q9"), ParameterError);
}

// Parameters: validation messages name the parameter, its value and the allowed range.
#include <catch2/catch.hpp>

#include <cmath>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"

namespace {
void require_rejected(dgq::DgqV1Params p, const char* fragment) {
  REQUIRE_THROWS_AS(p.validate(), dgq::ParameterError);
  REQUIRE_THROWS_WITH(p.validate(), Catch::Contains(fragment));
}
}  // namespace

TEST_CASE("params: defaults are valid and print canonically", "[dgq][params]") {
  const dgq::DgqV1Params p;
  REQUIRE_NOTHROW(p.validate());
  REQUIRE(p.to_string() == "win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table");
}

TEST_CASE("params: each bound is enforced at its edge", "[dgq][params]") {
  dgq::DgqV1Params p;
  p.win = 0;
  require_rejected(p, "win=0");
  p.win = 65537;
  require_rejected(p, "[1, 65536]");
  p = {};
  p.win = 65536;
  REQUIRE_NOTHROW(p.validate());
  p.win = 1;
  REQUIRE_NOTHROW(p.validate());

  p = {};
  p.group_ratio = 0.0f;
  require_rejected(p, "group_ratio=0 ");
  p.group_ratio = std::nextafter(1.0f, 2.0f);
  require_rejected(p, "(0, 1]");
  p.group_ratio = NAN;
  require_rejected(p, "group_ratio=nan");
  p.group_ratio = 1.0f;
  REQUIRE_NOTHROW(p.validate());

  p = {};
  p.min_var = -1e-9f;
  require_rejected(p, "min_var");
  p.min_var = INFINITY;
  require_rejected(p, "min_var=inf");
  p.min_var = 0.0f;
  REQUIRE_NOTHROW(p.validate());

  p = {};
  p.max_groups = 0;
  require_rejected(p, "max_groups=0");
  p.max_groups = 9;
  require_rejected(p, "[1, 8]");
  p.max_groups = 8;
  REQUIRE_NOTHROW(p.validate());
}

TEST_CASE("params: granularity and marker names parse and print back", "[dgq][params]") {
  for (auto g : {dgq::Granularity::segment, dgq::Granularity::segment_channel})
    REQUIRE(dgq::parse_granularity(dgq::granularity_name(g)) == g);
  for (auto m : {dgq::Markers::table, dgq::Markers::bitmap, dgq::Markers::inband})
    REQUIRE(dgq::parse_markers(dgq::markers_name(m)) == m);
  REQUIRE_THROWS_WITH(dgq::parse_granularity("channel"), Catch::Contains("granularity='channel'"));
  REQUIRE_THROWS_WITH(dgq::parse_markers("bits"), Catch::Contains("markers='bits'"));
  dgq::DgqV1Params p;
  p.group_ratio = 0.1f;
  p.granularity = dgq::Granularity::segment_channel;
  p.markers = dgq::Markers::inband;
  REQUIRE(p.to_string() ==
          "win=16,group_ratio=0.1,min_var=0.05,max_groups=5,granularity=segment-channel,markers=inband");
}

TEST_CASE("params: dgq_encode rejects invalid params before touching data", "[dgq][params]") {
  dgq::DgqV1Params p;
  p.max_groups = 12;
  const float x[2] = {1, 2};
  REQUIRE_THROWS_AS(dgq::dgq_encode(dgq::ConstTensor{x, dgq::DType::f32, 1, 2}, p), dgq::ParameterError);
}

TEST_CASE("params: boundaries parses, prints only when online, and every earlier spec keeps its text",
          "[dgq][params]") {
  for (auto b : {dgq::Boundaries::adaptive, dgq::Boundaries::online})
    REQUIRE(dgq::parse_boundaries(dgq::boundaries_name(b)) == b);
  REQUIRE_THROWS_WITH(dgq::parse_boundaries("fixed"), Catch::Contains("boundaries='fixed'"));
  dgq::DgqV1Params p;
  p.boundaries = dgq::Boundaries::online;
  REQUIRE_NOTHROW(p.validate());
  REQUIRE(p.to_string() ==
          "win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table,"
          "boundaries=online");
  REQUIRE_FALSE(p == dgq::DgqV1Params{});
  // The default prints nothing new, so the spec (and the config hash made from it) of every
  // dgq scheme written before the key existed is unchanged.
  REQUIRE(dgq::make_scheme("dgq:boundaries=adaptive")->spec() ==
          "dgq:win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table");
  REQUIRE(dgq::make_scheme("dgq:markers=bitmap,boundaries=online")->spec() ==
          "dgq:win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=bitmap,boundaries=online");
  REQUIRE_THROWS_AS(dgq::make_scheme("dgq:boundaries=fixed"), dgq::ParameterError);
}

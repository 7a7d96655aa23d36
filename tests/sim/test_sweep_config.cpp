// Sweep configs: parsing, errors that name the key and line, grid expansion, shards.
#include <catch2/catch.hpp>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/sweep.hpp"

using namespace dgq;

namespace {

sim::SweepConfig parse(const std::string& text) { return sim::parse_sweep_config_text(text, "/cfg/sweep.toml"); }

const char* kTwoTraces = R"(
schemes = ["fp16", "dgq"]
[[trace]]
path = "traces/a.h5"
[[trace]]
path = "/abs/b.h5"
label = "bee"
)";

}  // namespace

TEST_CASE("recorded trace paths resolve against the config's folder; labels default to the stem") {
  const auto c = parse(kTwoTraces);
  REQUIRE(c.traces.size() == 2);
  CHECK(c.traces[0].path == "/cfg/traces/a.h5");
  CHECK(c.traces[0].recorded_as == "traces/a.h5");
  CHECK(c.traces[0].label == "a");
  CHECK(c.traces[1].path == "/abs/b.h5");
  CHECK(c.traces[1].label == "bee");
}

TEST_CASE("the traces shorthand adds recorded traces") {
  const auto c = parse("schemes = [\"fp16\"]\ntraces = [\"x.h5\", \"y.h5\"]\n");
  REQUIRE(c.traces.size() == 2);
  CHECK(c.traces[1].path == "/cfg/y.h5");
}

TEST_CASE("an unknown key is an error naming the key and its line") {
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"]\n\nschemez = 1\n"),
                    Catch::Contains("/cfg/sweep.toml:3") && Catch::Contains("unknown key 'schemez'"));
  CHECK_THROWS_WITH(parse(std::string(kTwoTraces) + "[grid]\ngroup_ratios = [0.5]\n"),
                    Catch::Contains(":9:") && Catch::Contains("'group_ratios'") && Catch::Contains("[grid]"));
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"]\n[[synthetic]]\nkind = \"code\"\ntoken = 5\n"),
                    Catch::Contains(":4:") && Catch::Contains("'token'"));
}

TEST_CASE("wrong value types are errors naming the key and line") {
  CHECK_THROWS_WITH(parse(std::string(kTwoTraces) + "[grid]\nwin = [8, \"16\"]\n"),
                    Catch::Contains(":9:") && Catch::Contains("key 'win'") && Catch::Contains("integer"));
  CHECK_THROWS_WITH(parse("schemes = \"fp16\"\n[[trace]]\npath = 3\n"), Catch::Contains("key 'path'"));
  CHECK_THROWS_WITH(parse(std::string(kTwoTraces) + "[grid]\nmin_var = []\n"), Catch::Contains("empty"));
}

TEST_CASE("TOML syntax errors, missing schemes, no traces and bad schemes are reported") {
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"\n"), Catch::Contains("/cfg/sweep.toml:"));
  CHECK_THROWS_WITH(parse("[[trace]]\npath = \"a.h5\"\n"), Catch::Contains("'schemes'"));
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"]\n"), Catch::Contains("no traces"));
  CHECK_THROWS_AS(parse("schemes = [\"nope\"]\ntraces = [\"a.h5\"]\n"), ParameterError);
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"]\ntraces = [\"a/x.h5\", \"b/x.h5\"]\n"), Catch::Contains("'x'"));
}

TEST_CASE("grid points expand dgq schemes only, last axis fastest, traces outermost") {
  const auto c =
      parse(std::string(kTwoTraces) + "[grid]\ngroup_ratio = [0.5, 1.0]\nmarkers = [\"table\", \"bitmap\"]\n");
  const auto runs = sim::expand_runs(c);
  REQUIRE(runs.size() == 10);  // 2 traces x (fp16 + 2 x 2 dgq points)
  CHECK(runs[0].name == "fp16@a");
  CHECK(runs[1].scheme == "dgq:win=16,group_ratio=0.5,min_var=0.05,max_groups=5,granularity=segment,markers=table");
  CHECK(runs[2].scheme == "dgq:win=16,group_ratio=0.5,min_var=0.05,max_groups=5,granularity=segment,markers=bitmap");
  CHECK(runs[3].scheme == "dgq:win=16,group_ratio=1,min_var=0.05,max_groups=5,granularity=segment,markers=table");
  CHECK(runs[5].name == "fp16@bee");
  CHECK(runs[5].trace == 1);
  for (std::size_t i = 0; i < runs.size(); ++i) CHECK(runs[i].index == i);
}

TEST_CASE("a grid key also set in a scheme spec is an error") {
  const auto c = parse("schemes = [\"dgq:win=8\"]\ntraces = [\"a.h5\"]\n[grid]\nwin = [16, 32]\n");
  CHECK_THROWS_WITH(sim::expand_runs(c), Catch::Contains("sets win"));
}

TEST_CASE("the same run twice is an error") {
  const auto c = parse("schemes = [\"fp16\", \"fp16\"]\ntraces = [\"a.h5\"]\n");
  CHECK_THROWS_WITH(sim::expand_runs(c), Catch::Contains("fp16@a"));
}

TEST_CASE("synthetic traces multiply by the noise-rate grid and get distinct labels") {
  const auto c = parse(
      "schemes = [\"fp16\"]\n[grid]\nnoise_rate = [0.0, 0.05]\n"
      "[[synthetic]]\nkind = \"poetry\"\ntokens = 512\nseed = 9\n");
  REQUIRE(c.traces.size() == 2);
  CHECK(c.traces[0].label == "poetry-L512-s9");
  CHECK(c.traces[1].label == "poetry-L512-s9-noise0.05");
  CHECK(c.traces[1].synthetic->noise_rate == 0.05);
  CHECK(sim::synthetic_cache_path("out/r.h5", c.traces[1]) ==
        "out/r.h5.cache/gen-v" + std::to_string(sim::kGeneratorVersion) + "/poetry-L512-s9-noise0.05.h5");
}

TEST_CASE("invalid synthetic options are reported with the table's line") {
  CHECK_THROWS_WITH(parse("schemes = [\"fp16\"]\n[[synthetic]]\nkind = \"limerick\"\n"),
                    Catch::Contains("/cfg/sweep.toml:2"));
}

TEST_CASE("shards: parsing and every n-th run") {
  CHECK(sim::parse_shard("1/3").index == 1);
  CHECK(sim::parse_shard("1/3").count == 3);
  for (const char* bad : {"3/3", "1", "a/b", "-1/3", "1/0", "1/3x", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(sim::parse_shard(bad), ParameterError);
  }
  const auto runs = sim::expand_runs(parse(std::string(kTwoTraces) + "[grid]\ngroup_ratio = [0.5, 1.0]\n"));
  REQUIRE(runs.size() == 6);
  const auto shard = sim::select_shard(runs, {1, 4});
  REQUIRE(shard.size() == 2);
  CHECK(shard[0].index == 1);
  CHECK(shard[1].index == 5);
}

TEST_CASE("grid keys sweep the parameters of any registered family, for the schemes that declare them") {
  const auto c = parse(
      "schemes = [\"kivi-2\", \"dgq\", \"fp16\"]\ntraces = [\"a.h5\"]\n[grid]\ngroup = [16, 64]\nmax_groups = [3]\n");
  const auto runs = sim::expand_runs(c);
  REQUIRE(runs.size() == 4);  // kivi-2 x 2 group values, dgq x 1 max_groups value, fp16 as is
  CHECK(runs[0].scheme == "kivi-2:group=16,residual=32");
  CHECK(runs[1].scheme == "kivi-2:group=64,residual=32");
  CHECK(runs[2].scheme == "dgq:win=16,group_ratio=0.75,min_var=0.05,max_groups=3,granularity=segment,markers=table");
  CHECK(runs[3].scheme == "fp16");
  // Typed as the family declares: kivi's group is an integer.
  CHECK_THROWS_WITH(parse("schemes = [\"kivi-2\"]\ntraces = [\"a.h5\"]\n[grid]\ngroup = [1.5]\n"),
                    Catch::Contains("key 'group'") && Catch::Contains("integer"));
}

TEST_CASE("an [eval] table makes every model x text x ctx an input, paths resolved against the config") {
  const auto c = parse(R"(
schemes = ["fp16", "q8_0"]
[grid]
win = [8, 16]
[eval]
ctx = [512, 1024]
chunks = 2
query_rounding = "q8_0"
[[eval.model]]
path = "../models/smol.h5"
texts = ["t/code.h5", "/abs/prose.h5"]
[[eval.model]]
path = "g.h5"
label = "gemma"
texts = "t/code-g.h5"
)");
  REQUIRE(c.eval.has_value());
  CHECK(c.traces.empty());
  CHECK(c.eval->chunks == 2);
  CHECK(c.eval->base == "fp16");
  CHECK(c.eval->query_rounding == sim::QueryRounding::q8_0);
  REQUIRE(c.eval->inputs.size() == 6);  // 2 texts x 2 ctx + 1 text x 2 ctx
  CHECK(c.eval->inputs[0].label == "smol+code+ctx512");
  CHECK(c.eval->inputs[0].model_path == "/models/smol.h5");
  CHECK(c.eval->inputs[0].model_as == "../models/smol.h5");
  CHECK(c.eval->inputs[1].label == "smol+code+ctx1024");
  CHECK(c.eval->inputs[2].text_path == "/abs/prose.h5");
  CHECK(c.eval->inputs[5].label == "gemma+code-g+ctx1024");
  CHECK(c.eval->inputs[5].text_path == "/cfg/t/code-g.h5");
  // fp16 and q8_0 have no win parameter: one run each per input.
  const auto runs = sim::expand_runs(c);
  REQUIRE(runs.size() == 12);
  CHECK(runs[0].name == "fp16@smol+code+ctx512");
  CHECK(runs[1].name == "q8_0@smol+code+ctx512");
  CHECK(runs[11].trace == 5);
}

TEST_CASE("an [eval] grid expands the schemes as in replay sweeps") {
  const auto c = parse(
      "schemes = [\"dgq\"]\n[grid]\nwin = [8, 16]\n[eval]\nctx = 64\n[[eval.model]]\n"
      "path = \"m.h5\"\ntexts = [\"a.h5\"]\n");
  const auto runs = sim::expand_runs(c);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].name.find("win=8") != std::string::npos);
  CHECK(runs[1].name.find("win=16") != std::string::npos);
  CHECK(runs[1].name.find("@m+a+ctx64") != std::string::npos);
}

TEST_CASE("[eval] keys makes each input once per key position, pre-RoPE labelled") {
  const auto c = parse(
      "schemes = [\"q4_0\"]\n[eval]\nctx = 64\ncache = \"causal\"\nkeys = [\"post-rope\", "
      "\"pre-rope\"]\n[[eval.model]]\npath = \"m.h5\"\ntexts = [\"a.h5\"]\n");
  REQUIRE(c.eval->inputs.size() == 2);
  CHECK(c.eval->inputs[0].keys == sim::KeyPosition::post_rope);
  CHECK(c.eval->inputs[0].label == "m+a+ctx64+causal");  // the default keeps the labels of older sweeps
  CHECK(c.eval->inputs[1].keys == sim::KeyPosition::pre_rope);
  CHECK(c.eval->inputs[1].label == "m+a+ctx64+causal+prerope");
  const auto runs = sim::expand_runs(c);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].name == "q4_0@m+a+ctx64+causal+prerope");
  CHECK_THROWS_WITH(
      parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\nkeys = \"before\"\n[[eval.model]]\npath = \"m.h5\"\n"
            "texts = [\"a.h5\"]\n"),
      Catch::Contains(":4:") && Catch::Contains("key 'keys'") && Catch::Contains("expected post-rope or pre-rope"));
}

TEST_CASE("bad [eval] tables are errors naming the key or table") {
  const std::string model = "[[eval.model]]\npath = \"m.h5\"\ntexts = [\"a.h5\"]\n";
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nchunks = 1\n" + model), Catch::Contains("[eval] needs 'ctx'"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\n"), Catch::Contains("[[eval.model]]"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 3\n" + model),
                    Catch::Contains("key 'ctx'") && Catch::Contains("outside [4, 1048576]"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\nchunks = -1\n" + model),
                    Catch::Contains("key 'chunks'"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\nbase = \"nope\"\n" + model),
                    Catch::Contains(":4:") && Catch::Contains("key 'base'"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\nquery_rounding = \"q4\"\n" + model),
                    Catch::Contains("key 'query_rounding'"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\n[[eval.model]]\npath = \"m.h5\"\n"),
                    Catch::Contains(":4: [[eval.model]] needs 'path'"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = 16\n" + model + "seed = 3\n"),
                    Catch::Contains("unknown key 'seed' in [[eval.model]]"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\ntraces = [\"t.h5\"]\n[eval]\nctx = 16\n" + model),
                    Catch::Contains("cannot be combined with traces"));
  CHECK_THROWS_WITH(parse("schemes = [\"q8_0\"]\n[eval]\nctx = [16, 16]\n" + model),
                    Catch::Contains("two eval inputs are labelled 'm+a+ctx16'"));
}

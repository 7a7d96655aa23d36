// Sweeps end to end on tiny traces: resume after a killed run, shards + merge equal the
// unsharded sweep.
#include <catch2/catch.hpp>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "test_results_helpers.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

// A folder with two recorded traces and a config that also generates a synthetic one.
std::string make_sweep_folder(const std::string& name) {
  const std::string dir = test::scratch_dir(name);
  for (const char* trace : {"alpha", "beta"})
    test::write_tiny_trace(dir + "/" + trace + ".h5", test::tiny_meta(DType::f16, 48), DType::f16);
  std::ofstream(dir + "/sweep.toml") << R"(
schemes = ["fp16", "q8_0", "dgq:win=4"]
traces = ["alpha.h5"]
[[trace]]
path = "beta.h5"
[[synthetic]]
kind = "code"
tokens = 96
layers = 1
q_heads = 4
kv_heads = 2
head_dim = 16
probes = 3
seed = 5
noise_rate = 0.1
[grid]
group_ratio = [0.5, 1.0]
)";
  return dir;
}

std::vector<std::string> all_names(const sim::SweepConfig& c) {
  std::vector<std::string> names;
  for (const auto& r : sim::expand_runs(c)) names.push_back(r.name);
  std::sort(names.begin(), names.end());
  return names;
}

void check_same_runs(const std::string& a, const std::string& b, const std::vector<std::string>& names) {
  CHECK(sim::list_runs(a).complete == names);
  CHECK(sim::list_runs(b).complete == names);
  for (const auto& n : names) {
    CAPTURE(n);
    CHECK(sim::compare_runs(a, b, n) == "");
  }
}

}  // namespace

TEST_CASE("a sweep runs every point once; a rerun skips them all") {
  const std::string dir = make_sweep_folder("sweep-rerun");
  const auto config = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SweepOptions o;
  o.output = dir + "/r.h5";
  const auto first = sim::run_sweep(config, o);
  CHECK(first.total == 12);  // 3 traces x (fp16, q8_0, 2 dgq points)
  CHECK(first.ran == 12);
  CHECK(sim::list_runs(o.output).complete == all_names(config));
  CHECK(std::filesystem::exists(dir + "/r.h5.cache/gen-v" + std::to_string(sim::kGeneratorVersion) +
                                "/code-L96-s5-noise0.1.h5"));
  const auto again = sim::run_sweep(config, o);
  CHECK(again.ran == 0);
  CHECK(again.skipped_complete == 12);
}

TEST_CASE("a sweep killed part-way resumes: complete runs are kept, an incomplete run is redone") {
  const std::string dir = make_sweep_folder("sweep-resume");
  const auto config = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SweepOptions whole;
  whole.output = dir + "/whole.h5";
  sim::run_sweep(config, whole);
  // The "killed" sweep: half the runs finished, and one run's group was left without
  // `complete` (as a writer killed mid-run without the .partial protocol would leave it).
  sim::SweepOptions killed;
  killed.output = dir + "/killed.h5";
  killed.shard = {0, 2};
  CHECK(sim::run_sweep(config, killed).ran == 6);
  const auto runs = sim::expand_runs(config);
  test::plant_incomplete_run(killed.output, runs[1].name);
  CHECK(sim::list_runs(killed.output).incomplete == std::vector<std::string>{runs[1].name});
  sim::SweepOptions resume;
  resume.output = killed.output;
  const auto report = sim::run_sweep(config, resume);
  CHECK(report.skipped_complete == 6);
  CHECK(report.ran == 6);
  CHECK(sim::list_runs(killed.output).incomplete.empty());
  check_same_runs(killed.output, whole.output, all_names(config));
}

TEST_CASE("shards merged equal the unsharded sweep, whatever the thread count") {
  const std::string dir = make_sweep_folder("sweep-shards");
  const auto config = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SweepOptions whole;
  whole.output = dir + "/whole.h5";
  whole.threads = 2;
  sim::run_sweep(config, whole);
  std::vector<std::string> shards;
  for (std::size_t i = 0; i < 3; ++i) {
    sim::SweepOptions o;
    o.output = dir + "/shard" + std::to_string(i) + "/r.h5";  // separate folders, separate caches
    std::filesystem::create_directories(dir + "/shard" + std::to_string(i));
    o.shard = {i, 3};
    o.threads = 1;
    CHECK(sim::run_sweep(config, o).ran == 4);
    shards.push_back(o.output);
  }
  const auto report = sim::merge_results(dir + "/merged.h5", shards);
  CHECK(report.copied == 12);
  check_same_runs(dir + "/merged.h5", whole.output, all_names(config));
}

TEST_CASE("a cached synthetic trace made from other options is an error, not silently reused") {
  const std::string dir = make_sweep_folder("sweep-stale-cache");
  sim::SweepOptions o;
  o.output = dir + "/r.h5";
  sim::run_sweep(sim::parse_sweep_config(dir + "/sweep.toml"), o);
  // Same label (kind, tokens, seed, noise), one more layer.
  std::string text;
  {
    std::ifstream in(dir + "/sweep.toml");
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  text.replace(text.find("layers = 1"), 10, "layers = 2");
  std::ofstream(dir + "/sweep.toml") << text;
  const auto edited = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SweepOptions fresh;
  fresh.output = dir + "/r.h5";
  std::filesystem::remove(dir + "/r.h5");  // no complete runs: the sweep must read the cache
  CHECK_THROWS_WITH(sim::run_sweep(edited, fresh), Catch::Contains("layers 1 vs 2") && Catch::Contains("code-L96-s5"));
}

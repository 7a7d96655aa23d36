// Resuming a sweep after the code or the config changed (provenance): a complete run of
// another dgq version or configuration is refused before any work, unless allow_mixed_versions,
// which keeps each run's own label. Runs written before provenance count as "unknown".
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "dgq/sim/files/provenance/build_info.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "test_results_helpers.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

// A folder with one recorded trace and a two-scheme sweep over it (two runs); `layers` is the
// [replay] table's line, if any.
std::string make_folder(const std::string& name) {
  const std::string dir = test::scratch_dir(name);
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16, 48), DType::f16);
  std::ofstream(dir + "/sweep.toml") << "schemes = [\"fp16\", \"q8_0\"]\ntraces = [\"t.h5\"]\n";
  std::ofstream(dir + "/layer0.toml")
      << "schemes = [\"fp16\", \"q8_0\"]\ntraces = [\"t.h5\"]\n[replay]\nlayers = [0]\n";
  return dir;
}

sim::SweepReport sweep(const std::string& dir, const std::string& config, const std::string& out, bool allow = false) {
  sim::SweepOptions o;
  o.output = dir + "/" + out;
  o.allow_mixed_versions = allow;
  return sim::run_sweep(sim::parse_sweep_config(dir + "/" + config), o);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string kThis = sim::build_info().version_string();

}  // namespace

TEST_CASE("every run of a sweep records this build's version and its config hash") {
  const std::string dir = make_folder("prov-sweep-records");
  sweep(dir, "sweep.toml", "r.h5");
  const sim::RunListing listing = sim::list_runs(dir + "/r.h5");
  REQUIRE(listing.complete == std::vector<std::string>{"fp16@t", "q8_0@t"});
  const sim::SweepConfig config = sim::parse_sweep_config(dir + "/sweep.toml");
  for (const sim::SweepRun& r : sim::expand_runs(config)) {
    CAPTURE(r.name);
    CHECK(listing.provenance_of(r.name).version == kThis);
    CHECK(listing.provenance_of(r.name).config_hash == sim::sweep_run_config_hash(config, r));
  }
  CHECK(listing.provenance_of("fp16@t").config_hash != listing.provenance_of("q8_0@t").config_hash);
  const sim::FileProvenance root = sim::read_file_provenance(dir + "/r.h5");
  CHECK(root.format == "dgq-results");
  CHECK(root.version == kThis);
  CHECK(root.commit == sim::build_info().commit);
  CHECK(root.dirty == sim::build_info().dirty);
  CHECK_FALSE(root.config_hash);  // each run has its own
}

TEST_CASE("resuming over a run of another dgq version is refused, naming both, and writes nothing") {
  const std::string dir = make_folder("prov-sweep-other-version");
  sweep(dir, "sweep.toml", "r.h5");
  test::set_run_attribute(dir + "/r.h5", "q8_0@t", "dgq_version", "0000000000000000000000000000000000000000");
  const std::string before = bytes_of(dir + "/r.h5");
  const std::string hash = sim::list_runs(dir + "/r.h5").provenance_of("q8_0@t").config_hash;
  const std::string message = test::input_error_of([&] { sweep(dir, "sweep.toml", "r.h5"); });
  CHECK(message == dir + "/r.h5: run q8_0@t was written by dgq 0000000000000000000000000000000000000000 (config " +
                       hash + "), this is dgq " + kThis + " (config " + hash +
                       "); rerun into a new output or pass --allow-mixed-versions");
  CHECK(bytes_of(dir + "/r.h5") == before);
  CHECK_FALSE(std::filesystem::exists(dir + "/r.h5.partial"));
}

TEST_CASE("with allow_mixed_versions the resume keeps each run and its own version label") {
  const std::string dir = make_folder("prov-sweep-allowed");
  sweep(dir, "sweep.toml", "r.h5");
  test::set_run_attribute(dir + "/r.h5", "q8_0@t", "dgq_version", "other-build");
  const auto report = sweep(dir, "sweep.toml", "r.h5", true);
  CHECK(report.skipped_complete == 2);
  CHECK(report.ran == 0);
  const sim::RunListing listing = sim::list_runs(dir + "/r.h5");
  CHECK(listing.provenance_of("q8_0@t").version == "other-build");
  CHECK(listing.provenance_of("fp16@t").version == kThis);
}

TEST_CASE("a pending run added to a file of another version keeps the old runs' labels") {
  const std::string dir = make_folder("prov-sweep-allowed-add");
  sweep(dir, "sweep.toml", "r.h5");
  test::set_run_attribute(dir + "/r.h5", "q8_0@t", "dgq_version", "other-build");
  std::ofstream(dir + "/more.toml") << "schemes = [\"fp16\", \"q8_0\", \"int8-token\"]\ntraces = [\"t.h5\"]\n";
  CHECK_THROWS_AS(sweep(dir, "more.toml", "r.h5"), InputError);
  CHECK(sweep(dir, "more.toml", "r.h5", true).ran == 1);
  const sim::RunListing listing = sim::list_runs(dir + "/r.h5");
  CHECK(listing.provenance_of("q8_0@t").version == "other-build");
  CHECK(listing.provenance_of("int8-token@t").version == kThis);
}

TEST_CASE("resuming a sweep whose config changed is refused: the run's config hash differs") {
  const std::string dir = make_folder("prov-sweep-config");
  sweep(dir, "sweep.toml", "r.h5");
  // Same run names, but only layer 0 is replayed now: the old runs hold other numbers.
  const sim::SweepConfig changed = sim::parse_sweep_config(dir + "/layer0.toml");
  const std::string old_hash = sim::list_runs(dir + "/r.h5").provenance_of("fp16@t").config_hash;
  const std::string new_hash = sim::sweep_run_config_hash(changed, sim::expand_runs(changed)[0]);
  REQUIRE(old_hash != new_hash);
  const std::string message = test::input_error_of([&] { sweep(dir, "layer0.toml", "r.h5"); });
  CHECK(message == dir + "/r.h5: run fp16@t was written by dgq " + kThis + " (config " + old_hash + "), this is dgq " +
                       kThis + " (config " + new_hash + "); rerun into a new output or pass --allow-mixed-versions");
  CHECK(sweep(dir, "layer0.toml", "r.h5", true).skipped_complete == 2);
}

TEST_CASE("runs written before provenance count as unknown and are refused the same way") {
  const std::string dir = make_folder("prov-sweep-old");
  sweep(dir, "sweep.toml", "r.h5");
  test::make_run_predate_provenance(dir + "/r.h5", "fp16@t");
  CHECK_THAT(
      test::input_error_of([&] { sweep(dir, "sweep.toml", "r.h5"); }),
      Catch::StartsWith(dir + "/r.h5: run fp16@t was written by dgq 0.1.0 (config unknown), this is dgq " + kThis));
  test::set_run_attribute(dir + "/r.h5", "fp16@t", "dgq_version", nullptr);
  CHECK_THAT(test::input_error_of([&] { sweep(dir, "sweep.toml", "r.h5"); }),
             Catch::Contains("run fp16@t was written by dgq unknown (config unknown)"));
  CHECK(sweep(dir, "sweep.toml", "r.h5", true).skipped_complete == 2);
  CHECK(sim::list_runs(dir + "/r.h5").provenance_of("fp16@t") == sim::Provenance{});
}

TEST_CASE("merge refuses runs of different dgq versions across its inputs, unless allowed") {
  const std::string dir = make_folder("prov-merge");
  for (const char* shard : {"0/2", "1/2"}) {
    sim::SweepOptions o;
    o.output = dir + "/s" + std::string(1, shard[0]) + ".h5";
    o.shard = sim::parse_shard(shard);
    sim::run_sweep(sim::parse_sweep_config(dir + "/sweep.toml"), o);
  }
  CHECK(sim::merge_results(dir + "/same.h5", {dir + "/s0.h5", dir + "/s1.h5"}).copied == 2);
  test::set_run_attribute(dir + "/s1.h5", "q8_0@t", "dgq_version", "other-build");
  const auto hash_of = [&](const std::string& file, const std::string& run) {
    return sim::list_runs(file).provenance_of(run).config_hash;
  };
  const std::string message = test::input_error_of([&] {
    sim::merge_results(dir + "/m.h5", {dir + "/s0.h5", dir + "/s1.h5"});
  });
  CHECK(message == dir + "/s1.h5: run q8_0@t was written by dgq other-build (config " +
                       hash_of(dir + "/s1.h5", "q8_0@t") + "), " + dir + "/s0.h5: run fp16@t by dgq " + kThis +
                       " (config " + hash_of(dir + "/s0.h5", "fp16@t") +
                       "); merge runs of one dgq version or pass --allow-mixed-versions");
  CHECK_FALSE(std::filesystem::exists(dir + "/m.h5"));
  CHECK_FALSE(std::filesystem::exists(dir + "/m.h5.partial"));
  CHECK(sim::merge_results(dir + "/m.h5", {dir + "/s0.h5", dir + "/s1.h5"}, true).copied == 2);
  const sim::RunListing merged = sim::list_runs(dir + "/m.h5");
  CHECK(merged.provenance_of("q8_0@t").version == "other-build");
  CHECK(merged.provenance_of("fp16@t").version == kThis);
}

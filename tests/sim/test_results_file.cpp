// Results files: what h5py will read, the `complete` flag, atomic adds, merge.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_replay_support.hpp"
#include "test_results_helpers.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
namespace fs = std::filesystem;

namespace {

std::vector<sim::RunResult> tiny_runs(const std::vector<std::string>& names, int threads = 2, float offset = 0.5f) {
  const auto meta = test::tiny_meta(DType::f16, 40);
  std::vector<test::DamageScheme> schemes;
  for (std::size_t i = 0; i < names.size(); ++i) schemes.emplace_back(10 + 5 * static_cast<int>(i), offset);
  std::vector<const Scheme*> ptrs;
  for (const auto& s : schemes) ptrs.push_back(&s);
  sim::ReplayOptions options;
  options.threads = threads;
  sim::Replayer replayer(meta, "traces/tiny.h5", ptrs, names, options);
  for (int l = 0; l < meta.num_layers; ++l) replayer.add_layer(test::tiny_layer(meta, l, DType::f32));
  return replayer.finish();
}

std::vector<double> read_doubles(const std::string& path, const std::string& dataset, std::vector<hsize_t>* shape) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t s = H5Dget_space(d);
  shape->assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)), 0);
  H5Sget_simple_extent_dims(s, shape->data(), nullptr);
  std::vector<double> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s)));
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

}  // namespace

TEST_CASE("a missing results file lists no runs") {
  const auto dir = test::scratch_dir("results-missing");
  const auto listing = sim::list_runs(dir + "/none.h5");
  CHECK(listing.complete.empty());
  CHECK(listing.incomplete.empty());
}

TEST_CASE("a written run is complete and holds the documented tables") {
  const auto dir = test::scratch_dir("results-layout");
  const std::string path = dir + "/r.h5";
  const auto runs = tiny_runs({"a"});
  sim::add_runs(path, runs, false);
  CHECK_FALSE(fs::exists(path + ".partial"));
  CHECK(sim::list_runs(path).complete == std::vector<std::string>{"a"});
  std::vector<hsize_t> shape;
  CHECK(read_doubles(path, "/runs/a/k/snr_db", &shape) == runs[0].k.snr_db);
  CHECK(shape == std::vector<hsize_t>{2, 2});  // layers x KV heads
  CHECK(read_doubles(path, "/runs/a/attn/probes/kl", &shape) == runs[0].attn.kl);
  CHECK(shape == std::vector<hsize_t>{2, 4, 3});  // layers x q heads x probes
  const auto mean_kl = read_doubles(path, "/runs/a/attn/kl", &shape);
  CHECK(shape == std::vector<hsize_t>{2, 4});
  CHECK(mean_kl[5] == (runs[0].attn.kl[15] + runs[0].attn.kl[16] + runs[0].attn.kl[17]) / 3.0);
  const auto summary = read_doubles(path, "/runs/a/summary/attn_kl", &shape);
  CHECK(shape == std::vector<hsize_t>{4});
  CHECK(summary[3] == *std::max_element(runs[0].attn.kl.begin(), runs[0].attn.kl.end()));
  read_doubles(path, "/runs/a/layer_summary/k_snr_db", &shape);
  CHECK(shape == std::vector<hsize_t>{2, 4});
}

TEST_CASE("adding a run of an existing name needs replace; other runs are kept") {
  const auto dir = test::scratch_dir("results-replace");
  const std::string path = dir + "/r.h5";
  sim::add_runs(path, tiny_runs({"a", "b"}), false);
  CHECK_THROWS_AS(sim::add_runs(path, tiny_runs({"a"}), false), ParameterError);
  CHECK_FALSE(fs::exists(path + ".partial"));
  CHECK(sim::list_runs(path).complete == std::vector<std::string>{"a", "b"});
  sim::add_runs(path, tiny_runs({"a"}, 2, 3.0f), true);
  CHECK(sim::list_runs(path).complete == std::vector<std::string>{"a", "b"});
  std::vector<hsize_t> shape;
  CHECK(read_doubles(path, "/runs/a/k/mse", &shape) == tiny_runs({"a"}, 2, 3.0f)[0].k.mse);
}

TEST_CASE("an incomplete run is listed as incomplete and dropped by the next add") {
  const auto dir = test::scratch_dir("results-incomplete");
  const std::string path = dir + "/r.h5";
  sim::add_runs(path, tiny_runs({"a"}), false);
  test::plant_incomplete_run(path, "ghost");
  auto listing = sim::list_runs(path);
  CHECK(listing.complete == std::vector<std::string>{"a"});
  CHECK(listing.incomplete == std::vector<std::string>{"ghost"});
  CHECK_FALSE(listing.is_complete("ghost"));
  // The incomplete run does not block a run of its name, without --force.
  sim::add_runs(path, tiny_runs({"ghost"}), false);
  listing = sim::list_runs(path);
  CHECK(listing.complete == std::vector<std::string>{"a", "ghost"});
  CHECK(listing.incomplete.empty());
}

TEST_CASE("runs added to a file this process wrote go to a byte copy of it; a file from outside is rewritten") {
  // A sweep adds a pass of runs at a time; rewriting every earlier run each pass grew
  // quadratically (docs/robustness.md, "How long CI takes"). Both paths give the same runs.
  const auto dir = test::scratch_dir("results-append");
  const auto ab = tiny_runs({"a", "b"});
  sim::add_runs(dir + "/together.h5", ab, false);
  sim::add_runs(dir + "/appended.h5", {ab[0]}, false);
  REQUIRE(sim::h5::is_written_here(dir + "/appended.h5"));
  const std::size_t checks = sim::h5::metadata_checks_started();
  const std::size_t rewrites = sim::results_files_rewritten();
  sim::add_runs(dir + "/appended.h5", {ab[1]}, false);
  CHECK(sim::results_files_rewritten() == rewrites);
  CHECK(sim::h5::metadata_checks_started() == checks);
  CHECK(sim::h5::is_written_here(dir + "/appended.h5"));
  CHECK_FALSE(fs::exists(dir + "/appended.h5.partial"));

  fs::copy_file(dir + "/together.h5", dir + "/outside.h5");  // another writer's file
  CHECK_FALSE(sim::h5::is_written_here(dir + "/outside.h5"));
  sim::add_runs(dir + "/outside.h5", tiny_runs({"c"}), false);
  CHECK(sim::results_files_rewritten() == rewrites + 1);
  CHECK(sim::h5::metadata_checks_started() == checks + 1);  // walked once, then rewritten run by run

  for (const std::string& path : {dir + "/appended.h5", dir + "/outside.h5"}) {
    CAPTURE(path);
    const auto listing = sim::list_runs(path);
    CHECK(listing.incomplete.empty());
    for (const std::string name : {"a", "b"}) CHECK(sim::compare_runs(dir + "/together.h5", path, name) == "");
  }
  CHECK(sim::list_runs(dir + "/outside.h5").complete == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("a stale .partial from a killed writer does not affect the next add") {
  const auto dir = test::scratch_dir("results-stale-partial");
  const std::string path = dir + "/r.h5";
  { std::ofstream(path + ".partial") << "half a file"; }
  sim::add_runs(path, tiny_runs({"a"}), false);
  CHECK(sim::list_runs(path).complete == std::vector<std::string>{"a"});
  CHECK_FALSE(fs::exists(path + ".partial"));
}

TEST_CASE("a non-HDF5 results file is an error naming the file") {
  const auto dir = test::scratch_dir("results-garbage");
  const std::string path = dir + "/r.h5";
  { std::ofstream(path) << "not hdf5"; }
  CHECK_THROWS_WITH(sim::add_runs(path, tiny_runs({"a"}), false), Catch::Contains(path));
  CHECK_THROWS_AS(sim::list_runs(path), InputError);
}

TEST_CASE("results written with 1 and 2 threads are identical") {
  const auto dir = test::scratch_dir("results-threads");
  sim::add_runs(dir + "/one.h5", tiny_runs({"a", "b"}, 1), false);
  sim::add_runs(dir + "/two.h5", tiny_runs({"a", "b"}, 2), false);
  CHECK(sim::compare_runs(dir + "/one.h5", dir + "/two.h5", "a") == "");
  CHECK(sim::compare_runs(dir + "/one.h5", dir + "/two.h5", "b") == "");
}

TEST_CASE("compare_runs reports a difference in values") {
  const auto dir = test::scratch_dir("results-compare");
  sim::add_runs(dir + "/x.h5", tiny_runs({"a"}, 2, 0.5f), false);
  sim::add_runs(dir + "/y.h5", tiny_runs({"a"}, 2, 0.25f), false);
  CHECK_THAT(sim::compare_runs(dir + "/x.h5", dir + "/y.h5", "a"), Catch::Contains("different values"));
  CHECK_THAT(sim::compare_runs(dir + "/x.h5", dir + "/y.h5", "zzz"), Catch::Contains("missing"));
}

TEST_CASE("merge joins disjoint files, accepts identical duplicates and skips incomplete runs") {
  const auto dir = test::scratch_dir("results-merge");
  const auto all = tiny_runs({"a", "b", "c"});
  sim::add_runs(dir + "/s0.h5", {all[0], all[2]}, false);
  sim::add_runs(dir + "/s1.h5", {all[1], all[2]}, false);
  test::plant_incomplete_run(dir + "/s1.h5", "ghost");
  sim::add_runs(dir + "/whole.h5", all, false);
  const auto report = sim::merge_results(dir + "/merged.h5", {dir + "/s0.h5", dir + "/s1.h5"});
  CHECK(report.copied == 3);
  CHECK(report.identical_duplicates == 1);
  CHECK(report.skipped_incomplete == 1);
  CHECK(sim::list_runs(dir + "/merged.h5").complete == std::vector<std::string>{"a", "b", "c"});
  CHECK(sim::list_runs(dir + "/merged.h5").incomplete.empty());
  for (const char* name : {"a", "b", "c"}) CHECK(sim::compare_runs(dir + "/merged.h5", dir + "/whole.h5", name) == "");
}

TEST_CASE("merge rejects two different runs of the same name and leaves no output") {
  const auto dir = test::scratch_dir("results-merge-conflict");
  sim::add_runs(dir + "/x.h5", tiny_runs({"a"}, 2, 0.5f), false);
  sim::add_runs(dir + "/y.h5", tiny_runs({"a"}, 2, 0.25f), false);
  CHECK_THROWS_WITH(sim::merge_results(dir + "/m.h5", {dir + "/x.h5", dir + "/y.h5"}),
                    Catch::Contains("run 'a' differs") && Catch::Contains("y.h5"));
  CHECK_FALSE(fs::exists(dir + "/m.h5"));
  CHECK_FALSE(fs::exists(dir + "/m.h5.partial"));
}

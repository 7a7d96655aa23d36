// The sweep's synthetic-trace cache keys on the generator (provenance): generated traces
// record generator_version and generator_options, the cache path holds the version, and a cached
// trace made by another generator or from other options is never reused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
namespace fs = std::filesystem;

namespace {

const char* kSweep = R"(schemes = ["fp16"]
[[synthetic]]
kind = "prose"
tokens = 64
layers = 1
q_heads = 2
kv_heads = 1
head_dim = 16
probes = 2
seed = 4
)";

std::string cached_trace(const std::string& dir) {
  return dir + "/r.h5.cache/gen-v" + std::to_string(sim::kGeneratorVersion) + "/prose-L64-s4.h5";
}

sim::SweepReport sweep(const std::string& dir, const std::string& extra = "") {
  std::ofstream(dir + "/sweep.toml") << kSweep << extra;
  fs::remove(dir + "/r.h5");  // no complete runs: every sweep reads (or makes) the cached trace
  sim::SweepOptions o;
  o.output = dir + "/r.h5";
  return sim::run_sweep(sim::parse_sweep_config(dir + "/sweep.toml"), o);
}

void set_root_int(const std::string& path, const char* name, std::int64_t value) {
  sim::h5::Handle f(sim::h5::check(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path),
                    sim::h5::Handle::Kind::file);
  REQUIRE(H5Adelete(f.get(), name) >= 0);
  sim::h5::write_int_attribute(f.get(), name, value);
}

}  // namespace

TEST_CASE("a generated trace records the generator's version, its options and this build") {
  const std::string dir = test::scratch_dir("synth-generator-attributes");
  sim::SynthOptions o;
  o.layers = 1, o.q_heads = 2, o.kv_heads = 1, o.head_dim = 16, o.tokens = 64, o.probes = 2, o.noise_rate = 0.1;
  sim::write_synthetic_trace(o, dir + "/t.h5");
  const sim::TraceMeta meta = sim::TraceReader(dir + "/t.h5").meta();
  CHECK(meta.generator_version == sim::kGeneratorVersion);
  CHECK(meta.generator_options ==
        "kind=code,model=synthetic-llama-3-8b-like,layers=1,q_heads=2,kv_heads=1,head_dim=16,tokens=64,probes=2,"
        "seed=1,noise_rate=0.1,dtype=f16,rope_theta=500000,outlier_channels=4,outlier_scale=15");
  const sim::FileProvenance p = sim::read_file_provenance(dir + "/t.h5");
  CHECK(p.version);
  REQUIRE(p.config_hash);
  CHECK(p.config_hash->size() == 16);
}

TEST_CASE("the cache path holds the generator version: a trace of the old layout is not reused") {
  const std::string dir = test::scratch_dir("synth-cache-path");
  // Where the cache was before it keyed on the generator: must be ignored, not read.
  fs::create_directories(dir + "/r.h5.cache");
  std::ofstream(dir + "/r.h5.cache/prose-L64-s4.h5") << "a trace of an older generator";
  CHECK(sweep(dir).ran == 1);
  CHECK(fs::exists(cached_trace(dir)));
  CHECK(sim::TraceReader(cached_trace(dir)).meta().generator_version == sim::kGeneratorVersion);
}

TEST_CASE("a cached trace that records another generator version is refused") {
  const std::string dir = test::scratch_dir("synth-cache-version");
  sweep(dir);
  set_root_int(cached_trace(dir), "generator_version", sim::kGeneratorVersion + 1);
  CHECK_THROWS_WITH(sweep(dir), Catch::Contains(cached_trace(dir)) && Catch::Contains("generator version"));
}

TEST_CASE("a cached trace made with other generator options of the same label is refused") {
  // rope_theta shows neither in the label nor in the trace's shape: before the trace recorded its
  // options, this cache was silently reused.
  const std::string dir = test::scratch_dir("synth-cache-options");
  sweep(dir);
  CHECK_THROWS_WITH(sweep(dir, "rope_theta = 10000\n"),
                    Catch::Contains(cached_trace(dir)) && Catch::Contains("rope_theta=10000"));
}

// config_hash() and the canonical configuration texts of replay runs and traces: what changes
// a run's numbers changes its hash, what does not (threads, paths) leaves it alone.
#include <catch2/catch.hpp>

#include <filesystem>

#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
sim::SynthOptions two_layer_synthetic() {
  return {.layers = 2, .q_heads = 4, .kv_heads = 2, .head_dim = 16, .tokens = 64, .probes = 4, .seed = 3};
}
}  // namespace

TEST_CASE("config_hash is FNV-1a 64 as 16 lower-case hex digits") {
  // The reference values of FNV-1a 64 (Fowler/Noll/Vo test vectors).
  CHECK(sim::config_hash("") == "cbf29ce484222325");
  CHECK(sim::config_hash("a") == "af63dc4c8601ec8c");
  CHECK(sim::config_hash("foobar") == "85944171f73967e8");
}

TEST_CASE("a replay run's config text changes with the scheme, the layers and the trace, not with the path") {
  const sim::TraceMeta meta = sim::synthetic_meta(two_layer_synthetic());
  const std::string base = sim::replay_config_text("q8_0", meta, {0, 1});
  CHECK(base == sim::replay_config_text("q8_0", meta, {0, 1}));
  CHECK(base != sim::replay_config_text("fp16", meta, {0, 1}));
  CHECK(base != sim::replay_config_text("q8_0", meta, {0}));
  CHECK(base != sim::replay_config_text("q8_0", meta, {1, 0}));
  auto other_seed = two_layer_synthetic();
  other_seed.seed = 4;
  CHECK(base != sim::replay_config_text("q8_0", sim::synthetic_meta(other_seed), {0, 1}));
  auto other_rope = two_layer_synthetic();
  other_rope.rope_theta = 10000;  // invisible in the shape and the label, visible in the options
  CHECK(base != sim::replay_config_text("q8_0", sim::synthetic_meta(other_rope), {0, 1}));
  auto noisy = two_layer_synthetic();
  noisy.noise_rate = 0.25;
  CHECK(base != sim::replay_config_text("q8_0", sim::synthetic_meta(noisy), {0, 1}));
}

TEST_CASE("the identity of a generated trace read back equals the one computed from its options") {
  // A sweep checks a resume against synthetic_meta() before any trace is generated; the runs
  // were replayed from the generated file. Both must give one hash.
  const std::string dir = test::scratch_dir("config-hash-synthetic");
  auto options = two_layer_synthetic();
  options.noise_rate = 0.1;
  const std::string path = dir + "/t.h5";
  std::filesystem::remove(path);
  sim::write_synthetic_trace(options, path);
  const sim::TraceMeta read = sim::TraceReader(path).meta();
  CHECK(read.generator_version == sim::kGeneratorVersion);
  CHECK(read.generator_options == sim::generator_options_text(options));
  CHECK(sim::trace_identity_text(read) == sim::trace_identity_text(sim::synthetic_meta(options)));
}

TEST_CASE("replayed runs record the hash of their configuration, whatever the thread count") {
  const std::string dir = test::scratch_dir("config-hash-replay");
  const std::string path = dir + "/t.h5";
  std::filesystem::remove(path);
  sim::write_synthetic_trace(two_layer_synthetic(), path);
  const sim::TraceReader reader(path);
  const auto scheme = make_scheme("q8_0");
  sim::ReplayOptions one, two;
  one.threads = 1;
  two.threads = 2;
  two.layers = {1};
  const auto a = sim::replay_trace(reader, {scheme.get()}, {"a"}, one);
  const auto b = sim::replay_trace(reader, {scheme.get()}, {"b"}, two);
  CHECK(a[0].config_hash == sim::config_hash(sim::replay_config_text(scheme->spec(), reader.meta(), {0, 1})));
  CHECK(b[0].config_hash == sim::config_hash(sim::replay_config_text(scheme->spec(), reader.meta(), {1})));
  CHECK(a[0].config_hash != b[0].config_hash);
}

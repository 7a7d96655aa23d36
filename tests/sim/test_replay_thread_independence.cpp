// Replay results do not depend on the thread count: real schemes, a synthetic noisy trace
// with GQA, written to files and compared dataset by dataset (bytes of every value).
#include <catch2/catch.hpp>

#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

std::vector<sim::RunResult> replay_synthetic(const sim::SynthOptions& o, const std::vector<const Scheme*>& schemes,
                                             int threads) {
  sim::ReplayOptions options;
  options.threads = threads;
  sim::Replayer replayer(sim::synthetic_meta(o), "synthetic", schemes, {"dgq", "kivi", "q8"}, options);
  for (int l = 0; l < o.layers; ++l) replayer.add_layer(sim::synthesize_layer(o, l));
  return replayer.finish();
}

}  // namespace

TEST_CASE("replay with 1, 2 and 3 threads writes identical results") {
  const sim::SynthOptions o{.kind = "code",
                            .layers = 2,
                            .q_heads = 6,
                            .kv_heads = 3,
                            .head_dim = 32,
                            .tokens = 300,
                            .probes = 5,
                            .seed = 4,
                            .noise_rate = 0.1};
  const auto dgq = make_scheme("dgq:win=8,max_groups=3");
  const auto kivi = make_scheme("kivi-2");
  const auto q8 = make_scheme("q8_0");
  const std::vector<const Scheme*> schemes = {dgq.get(), kivi.get(), q8.get()};
  const auto dir = test::scratch_dir("replay-threads");
  for (int threads : {1, 2, 3}) {
    sim::add_runs(dir + "/t" + std::to_string(threads) + ".h5", replay_synthetic(o, schemes, threads), false);
  }
  for (const char* run : {"dgq", "kivi", "q8"}) {
    CAPTURE(run);
    CHECK(sim::compare_runs(dir + "/t1.h5", dir + "/t2.h5", run) == "");
    CHECK(sim::compare_runs(dir + "/t1.h5", dir + "/t3.h5", run) == "");
  }
  // The comparison sees real content: noise metrics exist and the lossy schemes differ.
  const auto runs = replay_synthetic(o, schemes, 2);
  CHECK(runs[0].has_noise);
  CHECK(runs[0].attn.kl != runs[1].attn.kl);
}

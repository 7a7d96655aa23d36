// The replay engine on in-memory traces: GQA mapping, causal masking, noise masks, the
// identity scheme, storage accounting and independence of the thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "dgq/errors.hpp"
#include "dgq/sim/metrics/attention.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_replay_support.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

std::vector<sim::RunResult> replay_in_memory(const sim::TraceMeta& meta, const std::vector<const Scheme*>& schemes,
                                             int threads, std::vector<int> layers = {}) {
  sim::ReplayOptions options;
  options.threads = threads;
  options.layers = layers;
  std::vector<std::string> names;
  for (std::size_t s = 0; s < schemes.size(); ++s) names.push_back("run" + std::to_string(s));
  sim::Replayer replayer(meta, "memory.h5", schemes, names, options);
  for (int l : sim::resolve_layers(meta, layers)) replayer.add_layer(test::tiny_layer(meta, l, DType::f32));
  return replayer.finish();
}

sim::TraceMeta gqa_meta() {
  sim::TraceMeta meta = test::tiny_meta(DType::f16, 40);
  meta.num_layers = 1;
  meta.num_q_heads = 9;
  meta.num_kv_heads = 3;
  return meta;
}

// The per-probe KL of q head g at probe t, computed directly against KV head h.
double direct_kl(const sim::TraceMeta& meta, const Scheme& scheme, int g, int h, std::size_t t) {
  const sim::LayerData layer = test::tiny_layer(meta, 0, DType::f32);
  Tensor3 k_hat(meta.kv_dtype, 1, meta.tokens, meta.head_dim), v_hat = k_hat;
  scheme.decompress(scheme.compress(layer.k.head(h), TensorRole::key), k_hat.head(0));
  scheme.decompress(scheme.compress(layer.v.head(h), TensorRole::value), v_hat.head(0));
  const auto q = to_float(layer.q.head(g));
  const auto k = to_float(layer.k.head(h)), v = to_float(layer.v.head(h));
  const auto kh = to_float(k_hat.head(0)), vh = to_float(v_hat.head(0));
  const std::int64_t n = meta.q_pos[t] + 1, d = meta.head_dim;
  sim::ProbeAttention ref, hat;
  sim::compute_probe_attention(q.data() + t * d, k.data(), v.data(), n, d, ref);
  sim::compute_probe_attention(q.data() + t * d, kh.data(), vh.data(), n, d, hat);
  return sim::compare_attention(ref, hat).kl;
}

}  // namespace

TEST_CASE("replay maps q head g to KV head g / 3 with 9 q heads and 3 KV heads") {
  const auto meta = gqa_meta();
  const test::DamageScheme scheme(20, 0.75f);
  const auto runs = replay_in_memory(meta, {&scheme}, 2);
  const std::size_t T = meta.q_pos.size();
  REQUIRE(runs[0].attn.kl.size() == 9 * T);
  bool a_wrong_mapping_would_differ = false;
  for (int g = 0; g < 9; ++g) {
    for (std::size_t t = 0; t < T; ++t) {
      CAPTURE(g, t);
      CHECK(runs[0].attn.kl[g * T + t] == direct_kl(meta, scheme, g, g / 3, t));
      if (runs[0].attn.kl[g * T + t] != direct_kl(meta, scheme, g, g % 3, t)) a_wrong_mapping_would_differ = true;
    }
  }
  CHECK(a_wrong_mapping_would_differ);
}

TEST_CASE("replay rejects q heads that are not a multiple of the KV heads") {
  auto meta = gqa_meta();
  meta.num_q_heads = 8;
  const test::DamageScheme scheme(0, 0.0f);
  CHECK_THROWS_AS(sim::Replayer(meta, "x.h5", {&scheme}, {"r"}, {}), InputError);
}

TEST_CASE("replay is causal: damage after a probe's position does not change its metrics") {
  const auto meta = test::tiny_meta(DType::f16, 40);  // probes at 3, 20, 39
  const test::DamageScheme scheme(39, 1.0f);          // only the last token changes
  const auto runs = replay_in_memory(meta, {&scheme}, 1);
  const auto& a = runs[0].attn;
  const std::size_t T = 3;
  for (std::size_t row = 0; row < a.kl.size() / T; ++row) {
    CAPTURE(row);
    CHECK(a.kl[row * T + 0] == 0.0);
    CHECK(a.kl[row * T + 1] == 0.0);
    CHECK(a.out_rel_l2[row * T + 1] == 0.0);
    CHECK(a.kl[row * T + 2] > 0.0);
    CHECK(a.out_rel_l2[row * T + 2] > 0.0);
  }
}

TEST_CASE("the fp16 scheme on an fp16 trace is the identity: KL 0, recall 1, infinite SNR") {
  const auto meta = test::tiny_meta(DType::f16, 40);
  const auto fp16 = make_scheme("fp16");
  const auto runs = replay_in_memory(meta, {fp16.get()}, 2);
  const auto& r = runs[0];
  for (double x : r.attn.kl) CHECK(x == 0.0);
  for (double x : r.attn.tv) CHECK(x == 0.0);
  for (double x : r.attn.top8) CHECK(x == 1.0);
  for (double x : r.attn.top32) CHECK(x == 1.0);
  for (double x : r.attn.out_rel_l2) CHECK(x == 0.0);
  for (double x : r.k.snr_db) CHECK(x == std::numeric_limits<double>::infinity());
  for (double x : r.v.mse) CHECK(x == 0.0);
}

TEST_CASE("noise-restricted metrics ignore a damaged noise token; noise mass is reported") {
  auto meta = test::tiny_meta(DType::f32, 40);
  meta.noise_mask.assign(40, 0);
  meta.noise_mask[39] = 1;
  meta.noise_mask[10] = 1;
  const test::DamageScheme scheme(39, 2.0f);
  const auto runs = replay_in_memory(meta, {&scheme}, 2);
  const auto& r = runs[0];
  REQUIRE(r.has_noise);
  const std::size_t T = 3;
  for (std::size_t row = 0; row < r.attn.kl.size() / T; ++row) {
    CAPTURE(row);
    CHECK(r.noise_mass[row * T + 0] == 0.0);  // window 0..3 has no noise
    CHECK(r.attn_clean.kl[row * T + 0] == 0.0);
    CHECK(r.noise_mass[row * T + 1] > 0.0);  // token 10
    CHECK(r.noise_mass[row * T + 1] == r.noise_mass_hat[row * T + 1]);
    CHECK(r.attn.kl[row * T + 2] > 0.0);         // the full softmax sees token 39 change
    CHECK(r.attn_clean.kl[row * T + 2] == 0.0);  // the clean one does not
    CHECK(r.attn_clean.out_rel_l2[row * T + 2] == 0.0);
    CHECK(r.noise_mass_hat[row * T + 2] != r.noise_mass[row * T + 2]);
  }
}

TEST_CASE("storage accounting: bytes, parts and segment edges per head") {
  const auto meta = test::tiny_meta(DType::f16, 40);  // 2 layers, 2 KV heads, d = 8
  const test::DamageScheme scheme(0, 0.0f);
  const auto runs = replay_in_memory(meta, {&scheme}, 2);
  const auto& k = runs[0].k;
  REQUIRE(k.part_names == std::vector<std::string>{"body", "header"});
  for (std::size_t u = 0; u < 4; ++u) {
    CHECK(k.original_bytes[u] == 40 * 8 * 2);
    CHECK(k.part_bytes[0][u] == 40 * 8 * 2);
    CHECK(k.part_bytes[1][u] == 3);
    CHECK(runs[0].v.part_bytes[1][u] == 5);
    CHECK(k.bytes[u] == 40 * 8 * 2 + 3);
    CHECK(k.segment_count[u] == 2);
  }
  CHECK(k.segment_offsets == std::vector<std::uint64_t>{0, 3, 6, 9, 12});
  CHECK(k.segment_edges == std::vector<std::uint32_t>{0, 20, 40, 0, 20, 40, 0, 20, 40, 0, 20, 40});
}

TEST_CASE("replay of selected layers fills tables for those layers only, in the given order") {
  const auto meta = test::tiny_meta(DType::f16, 40);
  const test::DamageScheme scheme(20, 0.5f);
  const auto runs = replay_in_memory(meta, {&scheme}, 1, {1});
  CHECK(runs[0].layers == std::vector<int>{1});
  CHECK(runs[0].k.mse.size() == 2);
  CHECK(runs[0].attn.kl.size() == 4 * 3);
  CHECK_THROWS_AS(sim::resolve_layers(meta, {2}), ParameterError);
  CHECK_THROWS_AS(sim::resolve_layers(meta, {1, 1}), ParameterError);
}

TEST_CASE("replay refuses a layer out of order and finishing early") {
  const auto meta = test::tiny_meta(DType::f16, 40);
  const test::DamageScheme scheme(0, 0.0f);
  sim::Replayer replayer(meta, "x.h5", {&scheme}, {"r"}, {});
  CHECK_THROWS_AS(replayer.add_layer(test::tiny_layer(meta, 1, DType::f32)), ParameterError);
  replayer.add_layer(test::tiny_layer(meta, 0, DType::f32));
  CHECK_THROWS_AS(replayer.finish(), ParameterError);
}

TEST_CASE("several schemes in one replay give the same results as one scheme at a time") {
  const auto meta = test::tiny_meta(DType::f16, 40);
  const test::DamageScheme a(10, 0.5f), b(30, -1.0f);
  const auto both = replay_in_memory(meta, {&a, &b}, 2);
  const auto only_b = replay_in_memory(meta, {&b}, 2);
  CHECK(both[1].attn.kl == only_b[0].attn.kl);
  CHECK(both[1].attn.out_cos == only_b[0].attn.out_cos);
  CHECK(both[1].v.snr_db == only_b[0].v.snr_db);
  CHECK(both[0].attn.kl != both[1].attn.kl);
}

TEST_CASE("run names default to spec@stem with unsafe characters replaced") {
  CHECK(sim::default_run_name("dgq:win=16,markers=bitmap", "data/code trace.h5") ==
        "dgq_win=16,markers=bitmap@code_trace");
  CHECK(sim::sanitize_run_name("a/b") == "a_b");
  CHECK(sim::sanitize_run_name("..") == "_..");
}

// Decode attention on DGQ v1's codes with their segment ranges: every marker mode, both
// granularities, several segments, and the heads it refuses (the checks: decode_attention_cases.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode_attention_cases.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace decode_test {

TEST_CASE(
    "decode attention on DGQ v1 codes: every marker mode, several segments, both granularities, chunk edges and GQA",
    "[decode_attention][dgq]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* markers : {"table", "bitmap", "inband"}) {
    // The segments must be there, or the per-token ranges would go untested.
    const DecodeCase several{StoredFormat::dgq, false, {2, 4, 128, 3 * K + 5}, Values::regimes, markers};
    const Problem p = make_problem(several, dgq::test::seed() + 51);
    for (const auto& r : p.k.ranges) {
      CAPTURE(markers);
      REQUIRE(r.edges.size() >= 3);
      REQUIRE(r.f16);
    }
    check_case(several, dgq::test::seed() + 51);
  }
  // Segment-channel: a lo and scale per segment and channel, read beside the codes.
  for (const char* markers : {"table", "inband"}) {
    const DecodeCase per_channel{StoredFormat::dgq, false,   {2, 4, 128, 2 * K + 9},
                                 Values::regimes,   markers, "segment-channel"};
    const Problem p = make_problem(per_channel, dgq::test::seed() + 54);
    for (const auto& r : p.k.ranges) {
      CAPTURE(markers);
      REQUIRE(r.edges.size() >= 3);
      REQUIRE(r.channels == 128);
    }
    check_case(per_channel, dgq::test::seed() + 54);
  }
  check_case({StoredFormat::dgq, false, {1, 3, 32, 70}, Values::regimes, "bitmap", "segment-channel"},
             dgq::test::seed() + 55);
  check_case({StoredFormat::dgq, false, {1, 1, 256, K + 1}, Values::large, "table", "segment-channel"},
             dgq::test::seed() + 56);
  for (std::int64_t L : {std::int64_t{1}, std::int64_t{7}, K - 1, K, K + 1})
    check_case({StoredFormat::dgq, false, {1, 3, 64, L}, Values::regimes},
               dgq::test::seed() + static_cast<std::uint64_t>(L));
  for (int D : {32, 256})
    check_case({StoredFormat::dgq, false, {2, 2, D, 600}}, dgq::test::seed() + static_cast<std::uint64_t>(D));
  check_case({StoredFormat::dgq, false, {1, 4, 128, 520}, Values::constant_rows}, dgq::test::seed() + 52);
  // With the rotation modifier: the codes in the rotated basis, the query and the output rotated.
  check_case({StoredFormat::dgq, true, {2, 4, 128, 2 * K + 9}, Values::regimes}, dgq::test::seed() + 57);
  check_case({StoredFormat::dgq, true, {1, 3, 64, K + 1}, Values::regimes, "inband", "segment-channel"},
             dgq::test::seed() + 58);
  check_case({StoredFormat::dgq, false, {1, 2, 128, 520}, Values::large}, dgq::test::seed() + 53);
}

TEST_CASE("decode attention on DGQ v1 codes: other schemes and missing ranges are refused", "[decode_attention][dgq]") {
  const auto x = head_values({StoredFormat::dgq, false, {1, 1, 64, 40}}, 7);
  const std::uint8_t* codes = nullptr;
  const auto q8 = dgq::make_scheme("q8_0")->compress(x.view(), dgq::TensorRole::key);
  REQUIRE_THROWS_WITH(dgq::cpu::dgq_segment_ranges(q8, &codes), Catch::Contains("not 'q8_0'"));
  const auto per_channel =
      dgq::make_scheme("dgq:granularity=segment-channel")->compress(x.view(), dgq::TensorRole::key);
  const dgq::cpu::SpanRanges per_channel_ranges = dgq::cpu::dgq_segment_ranges(per_channel, &codes);
  REQUIRE(per_channel_ranges.channels == 64);
  REQUIRE(per_channel_ranges.lo.size() == (per_channel_ranges.edges.size() - 1) * 64);
  // The rotation modifier is read, any other refused by name (the sinks' parts are not DGQ's).
  REQUIRE(dgq::cpu::dgq_segment_ranges(dgq::make_scheme("dgq:rot=hadamard")->compress(x.view(), dgq::TensorRole::key),
                                       &codes)
              .rotated);
  REQUIRE_THROWS_WITH(
      dgq::cpu::dgq_segment_ranges(dgq::make_scheme("dgq:sink=4")->compress(x.view(), dgq::TensorRole::key), &codes),
      Catch::Contains("modifier sink="));
  const Problem p = make_problem({StoredFormat::dgq, false, {1, 1, 64, 40}}, 8);
  dgq::cpu::StoredKv kv = p.stored;
  kv.v_ranges.clear();
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("segment ranges of every K and V head"));
  dgq::cpu::SpanRanges short_ranges = p.k.ranges[0];
  short_ranges.edges.back() = 39;
  kv = p.stored;
  kv.k_ranges = {&short_ranges};
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("do not cover its 40 tokens"));
  // Per-channel ranges of another width than the head's.
  dgq::cpu::SpanRanges narrow = p.k.ranges[0];
  narrow.channels = 32;
  narrow.lo.resize((narrow.edges.size() - 1) * 32);
  narrow.scale.resize(narrow.lo.size());
  kv = p.stored;
  kv.k_ranges = {&narrow};
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("and 64 channels"));
}

// dgq2 and KIVI (formats uniform2 .. uniform8): their b-bit codes read with each token's span
// range (a segment, a group inside one, a KIVI key group, or the token itself), K and V of
// different widths, bit for bit the twin on the values Scheme::decompress writes; rotated roles
// (dgq2's rot, rot_on) within the bound of plain attention on the decompressed cache.

}  // namespace decode_test

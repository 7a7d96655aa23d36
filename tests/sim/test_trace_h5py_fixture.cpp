// A trace written by h5py alone (tests/fixtures/h5py/make_fixture.py) is read by the C++
// reader with the exact values: the format needs no help from this project.
#include <catch2/catch.hpp>

#include "dgq/sim/files/trace.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
const std::string kFixture = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/h5py/trace-v1.h5";

float at(const Tensor3& t, std::int64_t h, std::int64_t i, std::int64_t d) {
  return load_element(t.head(h), i * t.channels + d);
}
}  // namespace

TEST_CASE("h5py fixture: attributes, including the bool enum and a fixed-length string", "[trace][h5py]") {
  const sim::TraceMeta expected{.model = "h5py-fixture",
                                .num_layers = 2,
                                .num_q_heads = 2,
                                .num_kv_heads = 1,
                                .head_dim = 4,
                                .rope_applied = true,
                                .source = "synthetic",
                                .prompt_kind = "poetry",
                                .seed = 42,
                                .tokens = 5,
                                .kv_dtype = DType::f16,
                                .q_pos = {2, 4},
                                .token_ids = {1000, 1001, 1002, 1003, 1004},
                                .noise_mask = {0, 0, 1, 0, 1},
                                .text = "roses are red",
                                .layer_ids = {},
                                .generator_version = std::nullopt,  // written by h5py, not the generator
                                .generator_options = {}};
  test::require_same_meta(sim::TraceReader(kFixture).meta(), expected);
}

TEST_CASE("h5py fixture: every k, v and q value exactly as the script wrote it", "[trace][h5py]") {
  sim::TraceReader reader(kFixture);
  for (int layer = 0; layer < 2; ++layer) {
    const auto data = reader.read_layer(layer);
    REQUIRE(data.k.dtype == DType::f16);
    REQUIRE(data.q.dtype == DType::f32);
    for (std::int64_t t = 0; t < 5; ++t) {
      for (std::int64_t d = 0; d < 4; ++d) {
        const float k = static_cast<float>(100 * layer + 10 * t + d) / 8.0f - 3.0f;
        CAPTURE(layer, t, d);
        REQUIRE(at(data.k, 0, t, d) == k);
        REQUIRE(at(data.v, 0, t, d) == -k / 2.0f);
      }
    }
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t d = 0; d < 4; ++d)
          REQUIRE(at(data.q, h, i, d) == static_cast<float>(layer + h + i + d) / 4.0f);
  }
}

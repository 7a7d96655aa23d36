// A trace written by h5py alone (tests/fixtures/h5py/make_fixture.py) is read by the C++
// reader with the exact values: the format needs no help from this project.
#include <catch2/catch.hpp>

#include "dgq/sim/trace.hpp"

using namespace dgq;

namespace {
const std::string kFixture = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/h5py/trace-v1.h5";

float at(const Tensor3& t, std::int64_t h, std::int64_t i, std::int64_t d) {
  return load_element(t.head(h), i * t.channels + d);
}
}  // namespace

TEST_CASE("h5py fixture: attributes, including the bool enum and a fixed-length string", "[trace][h5py]") {
  sim::TraceReader reader(kFixture);
  const auto& meta = reader.meta();
  REQUIRE(meta.model == "h5py-fixture");
  REQUIRE(meta.num_layers == 2);
  REQUIRE(meta.num_q_heads == 2);
  REQUIRE(meta.num_kv_heads == 1);
  REQUIRE(meta.head_dim == 4);
  REQUIRE(meta.rope_applied);
  REQUIRE(meta.source == "synthetic");
  REQUIRE(meta.prompt_kind == "poetry");
  REQUIRE(meta.seed == std::optional<std::uint64_t>(42));
  REQUIRE(meta.tokens == 5);
  REQUIRE(meta.kv_dtype == DType::f16);
  REQUIRE(meta.q_pos == std::vector<std::int32_t>{2, 4});
  REQUIRE(meta.token_ids == std::vector<std::int32_t>{1000, 1001, 1002, 1003, 1004});
  REQUIRE(meta.noise_mask == std::vector<std::uint8_t>{0, 0, 1, 0, 1});
  REQUIRE(meta.text == "roses are red");
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
        for (std::int64_t d = 0; d < 4; ++d) REQUIRE(at(data.q, h, i, d) == static_cast<float>(layer + h + i + d) / 4.0f);
  }
}

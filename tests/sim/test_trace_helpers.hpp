#pragma once
// Small traces built in memory for the trace, synth and compressed-file tests.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/trace.hpp"

namespace dgq::test {

// A fresh, empty scratch folder per call under the build tree.
// The whole content of a file (tests that compare files byte for byte or mutate their bytes).
inline std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::path(DGQ_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline sim::TraceMeta tiny_meta(DType dtype, std::int64_t tokens = 40) {
  sim::TraceMeta meta;
  meta.model = "tiny-test";
  meta.num_layers = 2;
  meta.num_q_heads = 4;
  meta.num_kv_heads = 2;
  meta.head_dim = 8;
  meta.rope_applied = true;
  meta.source = "synthetic";
  meta.prompt_kind = "code";
  meta.seed = 7;
  meta.tokens = tokens;
  meta.kv_dtype = dtype;
  meta.q_pos = {3, static_cast<std::int32_t>(tokens / 2), static_cast<std::int32_t>(tokens - 1)};
  return meta;
}

// Deterministic values with a wide spread (a simple LCG; these tests need variety, not quality).
inline void fill_pattern(Tensor3& t, std::uint32_t salt) {
  std::uint32_t state = 2463534242u ^ salt;
  const std::int64_t n = t.heads * t.tokens * t.channels;
  for (std::int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const float value = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 8.0f;
    store_element(MutTensor{t.storage.data(), t.dtype, 1, n}, i, value);
  }
}

inline sim::LayerData tiny_layer(const sim::TraceMeta& meta, int layer, DType q_dtype) {
  sim::LayerData data;
  data.layer = layer;
  data.k = Tensor3(meta.kv_dtype, meta.num_kv_heads, meta.tokens, meta.head_dim);
  data.v = Tensor3(meta.kv_dtype, meta.num_kv_heads, meta.tokens, meta.head_dim);
  data.q = Tensor3(q_dtype, meta.num_q_heads, static_cast<std::int64_t>(meta.q_pos.size()), meta.head_dim);
  fill_pattern(data.k, 100u + layer);
  fill_pattern(data.v, 200u + layer);
  fill_pattern(data.q, 300u + layer);
  return data;
}

inline void write_tiny_trace(const std::string& path, const sim::TraceMeta& meta, DType q_dtype) {
  sim::TraceWriter writer(path, meta);
  for (int layer = 0; layer < meta.num_layers; ++layer) writer.write_layer(tiny_layer(meta, layer, q_dtype));
  writer.finish();
}

// Every field of the metadata a reader returned equals the expected one.
inline void require_same_meta(const sim::TraceMeta& got, const sim::TraceMeta& expected) {
  REQUIRE(got.model == expected.model);
  REQUIRE(got.num_layers == expected.num_layers);
  REQUIRE(got.num_q_heads == expected.num_q_heads);
  REQUIRE(got.num_kv_heads == expected.num_kv_heads);
  REQUIRE(got.head_dim == expected.head_dim);
  REQUIRE(got.rope_applied == expected.rope_applied);
  REQUIRE(got.source == expected.source);
  REQUIRE(got.prompt_kind == expected.prompt_kind);
  REQUIRE(got.seed == expected.seed);
  REQUIRE(got.tokens == expected.tokens);
  REQUIRE(got.kv_dtype == expected.kv_dtype);
  REQUIRE(got.q_pos == expected.q_pos);
  REQUIRE(got.token_ids == expected.token_ids);
  REQUIRE(got.noise_mask == expected.noise_mask);
  REQUIRE(got.text == expected.text);
  REQUIRE(got.layer_ids == expected.layer_ids);
  REQUIRE(got.generator_version == expected.generator_version);
  REQUIRE(got.generator_options == expected.generator_options);
}

// The message of the InputError f throws; fails the test when f throws nothing or another type.
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected dgq::InputError, nothing was thrown");
  return {};
}

}  // namespace dgq::test

// dgq memory's inputs (dgq/sim/memory_inputs.hpp): token counts as people write them and a
// model's shape from a Hugging Face config.json or a GGUF's metadata.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/memory_inputs.hpp"
#include "gguf_bytes.hpp"

using dgq::sim::parse_token_count;
using dgq::sim::read_config_shape;
using Catch::Matchers::Contains;

namespace {

std::string write_config(const std::string& name, const std::string& json) {
  const auto path = std::filesystem::temp_directory_path() / ("dgq-test-config-" + name + ".json");
  std::ofstream(path) << json;
  return path.string();
}

}  // namespace

TEST_CASE("token counts: empty, a lone suffix, fractions and other suffixes are refused by name", "[memory]") {
  for (const std::string bad : {"", "k", "1.5k", "8x", "-8", "8 k", "0x10", "99999999999999"})
    REQUIRE_THROWS_WITH(parse_token_count(bad), Contains("'" + bad + "' is not a token count"));
}

TEST_CASE("token counts: plain numbers, k and m are powers of 1024, either case", "[memory]") {
  CHECK(parse_token_count("0") == 0);
  CHECK(parse_token_count("1") == 1);
  CHECK(parse_token_count("8192") == 8192);
  CHECK(parse_token_count("8k") == 8192);
  CHECK(parse_token_count("128K") == 131072);
  CHECK(parse_token_count("1m") == 1048576);
  CHECK(parse_token_count("1M") == 1048576);
}

TEST_CASE("token counts: more than 2^40 tokens is refused, 2^40 itself is not", "[memory]") {
  CHECK(parse_token_count("1048576m") == (std::int64_t{1} << 40));
  REQUIRE_THROWS_AS(parse_token_count("1048577m"), dgq::ParameterError);
  REQUIRE_THROWS_AS(parse_token_count("1099511627777"), dgq::ParameterError);
}

TEST_CASE("config: a missing file, non-JSON and a non-object are refused naming the file", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape("/no/such/config.json"), Contains("/no/such/config.json: cannot read"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config("garbage", "{not json")), Contains("not JSON"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config("array", "[1, 2]")), Contains("not a JSON object"));
}

TEST_CASE("config: missing and non-positive keys are named", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape(write_config("nolayers", R"({"num_attention_heads": 8, "hidden_size": 512})")),
                      Contains("config has no num_hidden_layers"));
  REQUIRE_THROWS_WITH(
      read_config_shape(write_config("zero", R"({"num_hidden_layers": 0, "num_attention_heads": 8, "hidden_size": 512})")),
      Contains("num_hidden_layers is 0, not a positive integer"));
  REQUIRE_THROWS_WITH(
      read_config_shape(write_config("text", R"({"num_hidden_layers": "2", "num_attention_heads": 8, "hidden_size": 512})")),
      Contains("num_hidden_layers is \"2\""));
}

TEST_CASE("config: heads that do not divide are refused", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape(write_config("hidden", R"({"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 512})")),
                      Contains("not a multiple of num_attention_heads"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config(
                          "gqa", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 3, "head_dim": 64})")),
                      Contains("not a multiple of num_key_value_heads"));
}

TEST_CASE("config: KV heads default to the query heads and head_dim to hidden_size / heads", "[memory]") {
  const auto shape = read_config_shape(
      write_config("mha", R"({"model_type": "llama", "num_hidden_layers": 22, "num_attention_heads": 32, "hidden_size": 2048})"));
  CHECK(shape.layers == 22);
  CHECK(shape.kv_heads == 32);
  CHECK(shape.head_dim == 64);
  CHECK_THAT(shape.name, Contains("llama"));
}

TEST_CASE("config: an explicit head_dim wins and a multimodal config's text_config is read", "[memory]") {
  const auto shape = read_config_shape(write_config("gemma", R"({"model_type": "gemma3", "text_config": {
      "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_size": 2560}})"));
  CHECK(shape.layers == 34);
  CHECK(shape.kv_heads == 4);
  CHECK(shape.head_dim == 256);
}

namespace {

// A GGUF holding only metadata: the architecture and the given (key, uint32) pairs.
std::string write_gguf_metadata(const std::string& name, const std::vector<std::pair<std::string, std::uint32_t>>& keys) {
  dgq::test::GgufBytes b = dgq::test::gguf_header(0, keys.size() + 2);
  b.str("general.architecture").u32(8).str("qwen2");
  b.str("general.name").u32(8).str("Qwen2.5 7B");
  for (const auto& [key, value] : keys) b.str(key).u32(4).u32(value);
  return dgq::test::write_gguf_file("memory-" + name, b.data);
}

}  // namespace

TEST_CASE("shape from a GGUF: layers, KV heads and head_dim from its metadata, by its magic", "[memory]") {
  const auto shape = read_config_shape(write_gguf_metadata(
      "qwen", {{"qwen2.block_count", 28}, {"qwen2.attention.head_count", 28}, {"qwen2.attention.head_count_kv", 4},
               {"qwen2.embedding_length", 3584}}));
  CHECK(shape.layers == 28);
  CHECK(shape.kv_heads == 4);
  CHECK(shape.head_dim == 128);  // 3584 / 28: no key_length
  CHECK(shape.name.rfind("Qwen2.5 7B (", 0) == 0);
  const auto keyed = read_config_shape(write_gguf_metadata(
      "keyed", {{"qwen2.block_count", 2}, {"qwen2.attention.head_count", 4}, {"qwen2.attention.key_length", 256}}));
  CHECK(keyed.kv_heads == 4);  // head_count_kv absent: one KV head per query head
  CHECK(keyed.head_dim == 256);
}

TEST_CASE("shape from a GGUF: missing keys and uneven heads are named", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape(write_gguf_metadata("nolayers", {{"qwen2.attention.head_count", 4}})),
                      Contains("GGUF metadata key qwen2.block_count missing"));
  REQUIRE_THROWS_WITH(read_config_shape(write_gguf_metadata(
                          "uneven", {{"qwen2.block_count", 2}, {"qwen2.attention.head_count", 6},
                                     {"qwen2.attention.head_count_kv", 4}, {"qwen2.attention.key_length", 64}})),
                      Contains("qwen2.attention.head_count 6 is not a multiple of qwen2.attention.head_count_kv 4"));
}

// dgq memory's inputs (dgq/sim/memory/memory_inputs.hpp): token counts as people write them and a
// model's shape from a Hugging Face config.json or a GGUF's metadata.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"
#include "gguf_bytes.hpp"

using Catch::Matchers::Contains;
using dgq::sim::parse_token_count;
using dgq::sim::read_config_shape;

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

// `dgq memory --tokens 0` once printed a row of 0 bytes with a ratio of 0.0000, exit 0.
TEST_CASE("token counts: zero tokens is refused, in any spelling", "[memory]") {
  for (const std::string zero : {"0", "0k", "00", "0M"})
    REQUIRE_THROWS_WITH(parse_token_count(zero), "must be >= 1, got " + zero);
}

TEST_CASE("token counts: plain numbers, k and m are powers of 1024, either case", "[memory]") {
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
  REQUIRE_THROWS_WITH(read_config_shape(write_config("garbage", "{not json")),
                      Contains("not a GGUF or JSON model config"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config("array", "[1, 2]")), Contains("not a JSON object"));
}

// `dgq memory --config README.md` once showed nlohmann-json's own text
// ("[json.exception.parse_error.101] parse error at line 1, column 1: ... last read: '#'").
TEST_CASE("config: a file that is not JSON is named with the line and character where reading stopped", "[memory]") {
  const std::string markdown = write_config("markdown", "# A README\n\nText.\n");
  REQUIRE_THROWS_WITH(read_config_shape(markdown), markdown + ": not a GGUF or JSON model config (line 1: '#')");
  const std::string third_line = write_config("third-line", "{\n  \"num_hidden_layers\": 2,\n  oops\n}\n");
  REQUIRE_THROWS_WITH(read_config_shape(third_line), third_line + ": not a GGUF or JSON model config (line 3: 'o')");
  const std::string cut = write_config("cut", "{\"num_hidden_layers\": 2");
  REQUIRE_THROWS_WITH(read_config_shape(cut), cut + ": not a GGUF or JSON model config (line 1: end of file)");
  const std::string empty = write_config("empty", "");
  REQUIRE_THROWS_WITH(read_config_shape(empty), empty + ": not a GGUF or JSON model config (line 1: end of file)");
  const std::string binary = write_config("binary", "\x01\x02");
  REQUIRE_THROWS_WITH(read_config_shape(binary), binary + ": not a GGUF or JSON model config (line 1: byte 0x01)");
}

TEST_CASE("config: a model_type that is not a string is not a library error", "[memory]") {
  const auto shape = read_config_shape(write_config(
      "type-number", R"({"model_type": 7, "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256})"));
  CHECK(shape.layers == 2);
  CHECK(shape.name.rfind("model (", 0) == 0);
}

TEST_CASE("config: missing and non-positive keys are named", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape(write_config("nolayers", R"({"num_attention_heads": 8, "hidden_size": 512})")),
                      Contains("config has no num_hidden_layers"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config(
                          "zero", R"({"num_hidden_layers": 0, "num_attention_heads": 8, "hidden_size": 512})")),
                      Contains("num_hidden_layers is 0, not a positive integer"));
  REQUIRE_THROWS_WITH(read_config_shape(write_config(
                          "text", R"({"num_hidden_layers": "2", "num_attention_heads": 8, "hidden_size": 512})")),
                      Contains("num_hidden_layers is \"2\""));
}

TEST_CASE("config: heads that do not divide are refused", "[memory]") {
  REQUIRE_THROWS_WITH(read_config_shape(write_config(
                          "hidden", R"({"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 512})")),
                      Contains("not a multiple of num_attention_heads"));
  REQUIRE_THROWS_WITH(
      read_config_shape(write_config(
          "gqa", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 3, "head_dim": 64})")),
      Contains("not a multiple of num_key_value_heads"));
}

TEST_CASE("config: KV heads default to the query heads and head_dim to hidden_size / heads", "[memory]") {
  const auto shape = read_config_shape(write_config(
      "mha", R"({"model_type": "llama", "num_hidden_layers": 22, "num_attention_heads": 32, "hidden_size": 2048})"));
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
std::string write_gguf_metadata(const std::string& name,
                                const std::vector<std::pair<std::string, std::uint32_t>>& keys) {
  dgq::test::GgufBytes b = dgq::test::gguf_header(0, keys.size() + 2);
  b.str("general.architecture").u32(8).str("qwen2");
  b.str("general.name").u32(8).str("Qwen2.5 7B");
  for (const auto& [key, value] : keys) b.str(key).u32(4).u32(value);
  return dgq::test::write_gguf_file("memory-" + name, b.data);
}

}  // namespace

TEST_CASE("shape from a GGUF: layers, KV heads and head_dim from its metadata, by its magic", "[memory]") {
  const auto shape = read_config_shape(write_gguf_metadata("qwen", {{"qwen2.block_count", 28},
                                                                    {"qwen2.attention.head_count", 28},
                                                                    {"qwen2.attention.head_count_kv", 4},
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
  REQUIRE_THROWS_WITH(read_config_shape(write_gguf_metadata("uneven", {{"qwen2.block_count", 2},
                                                                       {"qwen2.attention.head_count", 6},
                                                                       {"qwen2.attention.head_count_kv", 4},
                                                                       {"qwen2.attention.key_length", 64}})),
                      Contains("qwen2.attention.head_count 6 is not a multiple of qwen2.attention.head_count_kv 4"));
}

// `dgq memory --head-dim 100 --scheme q8_0` once printed a cache llama.cpp refuses to make.
TEST_CASE("head_dim: a family's deployed block must divide it, though dgq's compress pads", "[memory]") {
  using dgq::sim::head_dim_refusal;
  for (const std::string family : {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}) {
    CAPTURE(family);
    CHECK(head_dim_refusal(family, 128).empty());
    CHECK(head_dim_refusal(family, 100) ==
          family +
              ": llama.cpp stores it in blocks of 32 channels and refuses a head_dim they do not divide, got 100 "
              "(dgq's replay pads the last block, a cache no deployment holds)");
  }
  CHECK(head_dim_refusal("q8_0/fp16", 100).rfind("q8_0: llama.cpp stores it in blocks of 32", 0) == 0);
  CHECK(head_dim_refusal("fp16/q4_0", 100).rfind("q4_0: llama.cpp stores it in blocks of 32", 0) == 0);
  CHECK(head_dim_refusal("fp16", 100).empty());
  CHECK(head_dim_refusal("dgq", 7).empty());
}

TEST_CASE("head_dim: the scheme's own channel rules answer, parameters and modifiers included", "[memory]") {
  using dgq::sim::head_dim_refusal;
  CHECK(head_dim_refusal("turboquant", 100) ==
        "turboquant: head_dim (channels) must be a power of two in [16, 512] (the pinned codebooks), got 100");
  CHECK(head_dim_refusal("turboquant", 128).empty());
  CHECK(head_dim_refusal("dgq3", 96) ==
        "dgq3: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got 96");
  CHECK(head_dim_refusal("dgq3:rot=none,block=128", 64) ==
        "dgq3: head_dim (channels) must be a positive multiple of block = 128, got 64");
  CHECK(head_dim_refusal("q8_0:rot=hadamard", 96) ==
        "q8_0:rot=hadamard: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got 96");
  CHECK(head_dim_refusal("q8_0/turboquant", 100).rfind("turboquant: head_dim", 0) == 0);  // V's side refuses
  REQUIRE_THROWS_AS(head_dim_refusal("nope", 64), dgq::ParameterError);
}

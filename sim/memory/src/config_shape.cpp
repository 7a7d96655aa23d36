// A model's attention shape from its Hugging Face config.json (`dgq memory --config`; a GGUF:
// gguf_shape.cpp).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "dgq/errors.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"
#include "dgq/sim/model/gguf_file.hpp"

namespace dgq::sim {

namespace {

using Json = nlohmann::json;

// Configs of multimodal models (Gemma 3 4B+, Llama 4) keep the language model's keys here.
const Json& text_part(const Json& config) {
  return config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
}

int positive_int(const Json& config, const std::string& key, const std::string& path) {
  const Json& value = config.at(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0 || value.get<std::int64_t>() > kMaxShapeValue)
    throw InputError(path + ": config key " + key + " is " + value.dump() + ", not a positive integer");
  return value.get<int>();
}

int required(const Json& config, const std::string& key, const std::string& path) {
  if (!config.contains(key))
    throw InputError(path + ": config has no " + key + " (a Hugging Face config.json is expected)");
  return positive_int(config, key, path);
}

// Where nlohmann-json's parser stopped, in the file's terms: "line 1: '#'" or "line 3: end of
// file". byte is the 1-based offset of the last character it read (0 when it read none);
// nlohmann's own text ("[json.exception.parse_error.101] ... last read: '#'") names its internals.
std::string where_parsing_stopped(const std::string& text, std::size_t byte) {
  const std::size_t at = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const std::string where = "line " + std::to_string(line) + ": ";
  if (at >= text.size()) return where + "end of file";
  const auto c = static_cast<unsigned char>(text[at]);
  if (c >= 0x20 && c < 0x7f) return where + "'" + std::string(1, static_cast<char>(c)) + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", c);
  return where + "byte " + hex;
}

}  // namespace

ConfigShape read_config_shape(const std::string& path) {
  if (gguf::has_gguf_magic(path)) return read_gguf_shape(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError(path + ": not a GGUF or JSON model config (" + where_parsing_stopped(text, e.byte) + ")");
  }
  if (!root.is_object()) throw InputError(path + ": not a JSON object");
  const Json& config = text_part(root);
  ConfigShape shape;
  shape.layers = required(config, "num_hidden_layers", path);
  const int q_heads = required(config, "num_attention_heads", path);
  shape.kv_heads = config.contains("num_key_value_heads") ? positive_int(config, "num_key_value_heads", path) : q_heads;
  if (config.contains("head_dim") && !config["head_dim"].is_null()) {
    shape.head_dim = positive_int(config, "head_dim", path);
  } else {
    const int hidden = required(config, "hidden_size", path);
    if (hidden % q_heads != 0)
      throw InputError(path + ": hidden_size " + std::to_string(hidden) + " is not a multiple of num_attention_heads " +
                       std::to_string(q_heads) + " and there is no head_dim");
    shape.head_dim = hidden / q_heads;
  }
  if (q_heads % shape.kv_heads != 0)
    throw InputError(path + ": num_attention_heads " + std::to_string(q_heads) +
                     " is not a multiple of num_key_value_heads " + std::to_string(shape.kv_heads));
  const std::string type = root.contains("model_type") && root["model_type"].is_string()
                               ? root["model_type"].get<std::string>()
                               : std::string("model");
  shape.name = type + " (" + path + ")";
  return shape;
}

}  // namespace dgq::sim

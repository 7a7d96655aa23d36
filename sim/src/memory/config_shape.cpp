// A model's attention shape from its Hugging Face config.json (`dgq memory --config`; a GGUF:
// gguf_shape.cpp).
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "dgq/errors.hpp"
#include "dgq/sim/memory_inputs.hpp"
#include "model/gguf_file.hpp"

namespace dgq::sim {

namespace {

using Json = nlohmann::json;

// Configs of multimodal models (Gemma 3 4B+, Llama 4) keep the language model's keys here.
const Json& text_part(const Json& config) {
  return config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
}

int positive_int(const Json& config, const std::string& key, const std::string& path) {
  const Json& value = config.at(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0 || value.get<std::int64_t>() > (1 << 20))
    throw InputError(path + ": config key " + key + " is " + value.dump() + ", not a positive integer");
  return value.get<int>();
}

int required(const Json& config, const std::string& key, const std::string& path) {
  if (!config.contains(key)) throw InputError(path + ": config has no " + key + " (a Hugging Face config.json is expected)");
  return positive_int(config, key, path);
}

}  // namespace

ConfigShape read_config_shape(const std::string& path) {
  if (gguf::has_gguf_magic(path)) return read_gguf_shape(path);
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  Json root;
  try {
    root = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw InputError(path + ": not JSON (" + std::string(e.what()) + ")");
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
    throw InputError(path + ": num_attention_heads " + std::to_string(q_heads) + " is not a multiple of num_key_value_heads " +
                     std::to_string(shape.kv_heads));
  const std::string type = root.value("model_type", std::string("model"));
  shape.name = type + " (" + path + ")";
  return shape;
}

}  // namespace dgq::sim

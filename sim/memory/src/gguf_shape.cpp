// A model's attention shape from a GGUF's metadata (`dgq memory --config MODEL.gguf`): the keys
// llama.cpp reads for every architecture, so any GGUF can be sized, not only those `dgq eval`
// runs.
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"
#include "dgq/sim/model/gguf_file.hpp"

namespace dgq::sim {

namespace {

int positive(std::int64_t value, const std::string& key, const std::string& path) {
  if (value <= 0 || value > kMaxShapeValue)
    throw InputError(path + ": GGUF metadata key " + key + " = " + std::to_string(value) + ", not a positive integer");
  return static_cast<int>(value);
}

}  // namespace

ConfigShape read_gguf_shape(const std::string& path) {
  const gguf::File f(path);
  const std::string arch = f.string_value("general.architecture");
  const auto key = [&](const char* name) { return arch + "." + name; };
  ConfigShape shape;
  shape.layers = positive(f.integer_value(key("block_count")), key("block_count"), path);
  const int q_heads = positive(f.integer_value(key("attention.head_count")), key("attention.head_count"), path);
  shape.kv_heads =
      positive(f.integer_value(key("attention.head_count_kv"), q_heads), key("attention.head_count_kv"), path);
  if (f.find(key("attention.key_length")) != nullptr) {
    shape.head_dim = positive(f.integer_value(key("attention.key_length")), key("attention.key_length"), path);
  } else {
    const int hidden = positive(f.integer_value(key("embedding_length")), key("embedding_length"), path);
    if (hidden % q_heads != 0)
      throw InputError(path + ": GGUF " + key("embedding_length") + " " + std::to_string(hidden) +
                       " is not a multiple of " + key("attention.head_count") + " " + std::to_string(q_heads) +
                       " and there is no " + key("attention.key_length"));
    shape.head_dim = hidden / q_heads;
  }
  if (q_heads % shape.kv_heads != 0)
    throw InputError(path + ": GGUF " + key("attention.head_count") + " " + std::to_string(q_heads) +
                     " is not a multiple of " + key("attention.head_count_kv") + " " + std::to_string(shape.kv_heads));
  shape.name = f.string_value("general.name", arch) + " (" + path + ")";
  return shape;
}

}  // namespace dgq::sim

#pragma once
// The attention shapes of the named models dgq knows, from each model's config.json
// (docs/facts.md, "Model shapes"): the one table `dgq memory --model` and the synthetic trace
// defaults read, so a shape is written down once.
#include <array>
#include <string_view>

namespace dgq::sim {

struct ModelShape {
  std::string_view name;  // as `dgq memory --model` takes it
  int layers = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
};

// In the order `dgq memory --help` lists them.
inline constexpr std::array<ModelShape, 4> kModelShapes{{
    {"llama-3-8b", 32, 32, 8, 128},
    {"llama-3.1-8b", 32, 32, 8, 128},
    {"llama-3-70b", 80, 64, 8, 128},
    {"smollm2-135m", 30, 9, 3, 64},
}};

// The table's entry for a name, or nullptr.
constexpr const ModelShape* find_model_shape(std::string_view name) {
  for (const ModelShape& shape : kModelShapes)
    if (shape.name == name) return &shape;
  return nullptr;
}

// The entry for a name fixed in the source: a name not in the table does not compile.
consteval ModelShape model_shape(std::string_view name) {
  const ModelShape* shape = find_model_shape(name);
  if (shape == nullptr) throw "not a name in kModelShapes";
  return *shape;
}

}  // namespace dgq::sim

// `dgq memory`: exact KV-cache bytes (K and V, all layers and KV heads) per scheme for a
// model shape and context lengths, from Scheme::planned_bytes (DGQ: its upper bound at the
// segment budget).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"

namespace dgq::cli {

namespace {

struct ModelShape {
  int layers = 0, kv_heads = 0, head_dim = 0;
};

// From each model's config.json (../shared/FACTS.md; Llama-3-70B: 80 layers, 8 KV heads, 128).
const std::map<std::string, ModelShape>& known_models() {
  static const std::map<std::string, ModelShape> models = {
      {"llama-3-8b", {32, 8, 128}},
      {"llama-3.1-8b", {32, 8, 128}},
      {"llama-3-70b", {80, 8, 128}},
      {"smollm2-135m", {30, 3, 64}},
  };
  return models;
}

struct MemoryArgs {
  std::string model;
  ModelShape shape;
  std::vector<std::int64_t> tokens = {8192, 32768, 131072};
  std::vector<std::string> schemes;
};

ModelShape resolve_shape(const MemoryArgs& a) {
  ModelShape s;
  if (!a.model.empty()) s = known_models().at(a.model);
  if (a.shape.layers) s.layers = a.shape.layers;
  if (a.shape.kv_heads) s.kv_heads = a.shape.kv_heads;
  if (a.shape.head_dim) s.head_dim = a.shape.head_dim;
  if (s.layers <= 0 || s.kv_heads <= 0 || s.head_dim <= 0)
    throw ParameterError("memory: give --model or all of --layers, --kv-heads, --head-dim (each >= 1)");
  return s;
}

void print_article_note() {
  std::printf(
      "\nnote: the source article's \"2.17 GB -> 0.54 GB\" for 128K tokens matches neither the fp16 cache of\n"
      "      this model (above: 16 GiB = 17.18 GB; 64 GiB ignoring GQA) nor any scheme's figure; int8 codes from\n"
      "      fp16 save at most ~2x, not 4x (see ../shared/FACTS.md).\n");
}

void run_memory(const MemoryArgs& a) {
  const ModelShape s = resolve_shape(a);
  std::vector<std::string> specs = a.schemes.empty() ? scheme_families() : a.schemes;
  std::vector<std::unique_ptr<Scheme>> schemes;
  for (const auto& spec : specs) schemes.push_back(make_scheme(spec));
  std::printf("KV cache of %s%d layers x %d KV heads x head_dim %d, K and V, fp16 input\n",
              a.model.empty() ? "" : (a.model + ": ").c_str(), s.layers, s.kv_heads, s.head_dim);
  int width = 6;
  for (const auto& scheme : schemes) width = std::max(width, static_cast<int>(scheme->spec().size()));
  std::printf("%-10s %-*s %20s %10s %10s %14s\n", "tokens", width, "scheme", "bytes", "GiB", "GB", "ratio vs fp16");
  for (const std::int64_t tokens : a.tokens) {
    if (tokens < 0) throw ParameterError("memory: --tokens must be >= 0, got " + std::to_string(tokens));
    const auto units = static_cast<std::uint64_t>(s.layers) * static_cast<std::uint64_t>(s.kv_heads);
    const std::uint64_t fp16 = 2 * units * static_cast<std::uint64_t>(tokens) * s.head_dim * 2;
    for (const auto& scheme : schemes) {
      const std::uint64_t bytes =
          units * (scheme->planned_bytes(tokens, s.head_dim, DType::f16, TensorRole::key) +
                   scheme->planned_bytes(tokens, s.head_dim, DType::f16, TensorRole::value));
      std::printf("%-10lld %-*s %20llu %10.3f %10.3f %14.4f\n", static_cast<long long>(tokens), width,
                  scheme->spec().c_str(), static_cast<unsigned long long>(bytes),
                  static_cast<double>(bytes) / 1073741824.0, static_cast<double>(bytes) / 1e9,
                  bytes ? static_cast<double>(fp16) / static_cast<double>(bytes) : 0.0);
    }
  }
  const bool article_case = (a.model == "llama-3-8b" || a.model == "llama-3.1-8b");
  for (const std::int64_t tokens : a.tokens)
    if (article_case && tokens == 131072) print_article_note();
}

}  // namespace

void register_memory(CLI::App& app) {
  auto* cmd = app.add_subcommand("memory", "Exact KV-cache bytes per scheme for a model shape and context lengths");
  auto args = std::make_shared<MemoryArgs>();
  std::vector<std::string> names;
  for (const auto& [name, shape] : known_models()) names.push_back(name);
  cmd->add_option("--model", args->model, "llama-3-8b, llama-3.1-8b, llama-3-70b or smollm2-135m")
      ->check(CLI::IsMember(names));
  cmd->add_option("--layers", args->shape.layers, "layers (overrides --model)")->check(CLI::PositiveNumber);
  cmd->add_option("--kv-heads", args->shape.kv_heads, "KV heads (overrides --model)")->check(CLI::PositiveNumber);
  cmd->add_option("--head-dim", args->shape.head_dim, "channels per head (overrides --model)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tokens", args->tokens, "context lengths, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--scheme", args->schemes, "scheme specs (repeatable; default: every family)");
  cmd->callback([args] { run_memory(*args); });
}

}  // namespace dgq::cli

// `dgq memory`: exact KV-cache bytes (K and V, all layers and KV heads) per scheme for a
// model shape and context lengths, from Scheme::planned_bytes (DGQ: its upper bound at the
// segment budget), for fp16 K/V; the rows a scheme keeps raw (KIVI's residual, KVarN's sink and
// open tile, sink=N) are counted in --raw-dtype (docs/spec.md rule C9: fp16 by default, as
// deployments hold them). --json PATH also writes the same rows machine-readably. The table names each
// scheme as it was asked for (the family alone by default); the JSON also keeps the canonical spec.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"
#include "dgq/sim/memory/memory_table.hpp"
#include "dgq/sim/model/model_shapes.hpp"
#include "number_options.hpp"

namespace dgq::cli {

namespace {

struct MemoryArgs {
  std::string model;
  std::string config_path;  // a Hugging Face config.json or a GGUF; empty: --model or the three numbers
  sim::CacheShape shape;    // --layers/--kv-heads/--head-dim, over --model's or --config's
  std::vector<std::string> token_texts = {"8k", "32k", "128k"};  // as typed: 8192, 8k, 1m
  std::vector<std::int64_t> tokens;                              // parsed from token_texts
  bool article_note = false;            // --article-note: the source article's 128K figures beside the table
  SchemeListArgs scheme_args;           // --scheme SPEC ... (or the deprecated --schemes LIST)
  std::vector<std::string> schemes;     // resolved from scheme_args; empty: every family
  std::string json_path;                // empty: console only
  std::string raw_dtype_text = "fp16";  // --raw-dtype
  DType raw_dtype = DType::f16;
};

// The shape as given: --model's entry of the table or --config's file, then
// --layers/--kv-heads/--head-dim over it; title names the source in the table's heading.
sim::CacheShape resolve_shape(const MemoryArgs& a) {
  sim::CacheShape s;
  if (!a.model.empty() && !a.config_path.empty()) throw ParameterError("memory: give --model or --config, not both");
  if (!a.model.empty()) {  // CLI::IsMember has refused unknown names
    const sim::ModelShape& known = *sim::find_model_shape(a.model);
    s = {known.layers, known.kv_heads, known.head_dim, a.model};
  }
  if (!a.config_path.empty()) {
    const sim::ConfigShape config = sim::read_config_shape(a.config_path);
    s = {config.layers, config.kv_heads, config.head_dim, config.name};
  }
  if (a.shape.layers) s.layers = a.shape.layers;
  if (a.shape.kv_heads) s.kv_heads = a.shape.kv_heads;
  if (a.shape.head_dim) s.head_dim = a.shape.head_dim;
  if (s.layers <= 0 || s.kv_heads <= 0 || s.head_dim <= 0)
    throw ParameterError("memory: give --model, --config or all of --layers, --kv-heads, --head-dim (each >= 1)");
  return s;
}

// "a, b, c or d", the table's names for --help.
std::string model_option_help(const std::vector<std::string>& names) {
  std::string help;
  for (std::size_t i = 0; i < names.size(); ++i)
    help += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return help;
}

void print_article_note() {
  std::printf(
      "\nnote: the source article's \"2.17 GB -> 0.54 GB\" is for Llama-3-8B at 128K tokens, whose fp16 cache is\n"
      "      17.18 GB (16 GiB; 64 GiB ignoring GQA); int8 codes from fp16 save at most ~2x, not 4x\n"
      "      (docs/results.md, claims ledger).\n");
}

void print_left_out(const sim::CacheShape& s, const std::vector<std::string>& left_out) {
  if (left_out.empty()) return;
  std::string names;
  for (const std::string& family : left_out) names += (names.empty() ? "" : ", ") + family;
  std::printf("not listed (they cannot hold head_dim %d; `dgq memory --scheme FAMILY` says why): %s\n", s.head_dim,
              names.c_str());
}

void print_rows(const sim::CacheShape& s, DType raw_dtype, const std::vector<sim::MemoryRow>& rows) {
  std::printf("KV cache of %s%d layers x %d KV heads x head_dim %d, K and V, fp16 input, raw rows in %s\n",
              s.title.empty() ? "" : (s.title + ": ").c_str(), s.layers, s.kv_heads, s.head_dim,
              std::string(dtype_name(raw_dtype)).c_str());
  int width = 6;
  for (const auto& row : rows) width = std::max(width, static_cast<int>(row.label.size()));
  std::printf("%-10s %-*s %20s %10s %10s %14s\n", "tokens", width, "scheme", "bytes", "GiB", "GB", "ratio vs fp16");
  for (const auto& row : rows)
    std::printf("%-10lld %-*s %20llu %10.3f %10.3f %14.4f\n", static_cast<long long>(row.tokens), width,
                row.label.c_str(), static_cast<unsigned long long>(row.bytes),
                static_cast<double>(row.bytes) / 1073741824.0, static_cast<double>(row.bytes) / 1e9, row.ratio_vs_fp16);
}

void run_memory(const MemoryArgs& a) {
  const sim::MemoryTable table = sim::memory_table(resolve_shape(a), a.schemes, a.tokens, a.raw_dtype);
  print_rows(table.shape, table.raw_dtype, table.rows);
  print_left_out(table.shape, table.left_out);
  if (!a.json_path.empty()) sim::write_memory_json(a.json_path, a.model, table);
  if (a.article_note) print_article_note();
}

}  // namespace

void register_memory(CLI::App& app) {
  auto* cmd = app.add_subcommand("memory", "Exact KV-cache bytes per scheme for a model shape and context lengths");
  auto args = std::make_shared<MemoryArgs>();
  std::vector<std::string> names;
  for (const sim::ModelShape& shape : sim::kModelShapes) names.emplace_back(shape.name);
  const std::string help = model_option_help(names);
  std::sort(names.begin(), names.end());  // CLI::IsMember's refusal lists them sorted
  cmd->add_option("--model", args->model, help)->check(CLI::IsMember(names));
  const CLI::Validator shape_value = whole_number(1, sim::kMaxShapeValue);
  cmd->add_option("--layers", args->shape.layers, "layers (overrides --model)")->check(shape_value);
  cmd->add_option("--kv-heads", args->shape.kv_heads, "KV heads (overrides --model)")->check(shape_value);
  cmd->add_option("--head-dim", args->shape.head_dim,
                  "channels per head (overrides --model); each scheme must take it, as its deployment does")
      ->check(shape_value);
  cmd->add_option("--config", args->config_path,
                  "the model's Hugging Face config.json, or its GGUF (its metadata; instead of --model)");
  // Checked when the line is read, as every numeric option is: "memory: --tokens: must be >= 1, got 0".
  const CLI::Validator token_count(
      [](const std::string& text) -> std::string {
        try {
          (void)sim::parse_token_count(text);
          return "";
        } catch (const ParameterError& e) {
          return e.what();
        }
      },
      "", "token count");
  cmd->add_option("--tokens", args->token_texts, "context lengths, comma-separated: 8192, 8k, 128k, 1m")
      ->delimiter(',')
      ->check(token_count)
      ->capture_default_str();
  cmd->add_flag("--article-note", args->article_note,
                "also print how the source article's 128K figures compare (docs/results.md, claims ledger)");
  add_scheme_list_options(*cmd, args->scheme_args,
                          scheme_option_help("scheme specs (repeatable; default: every family)"));
  cmd->add_option("--json", args->json_path, "also write the rows as JSON here (format dgq-memory)");
  cmd->add_option("--raw-dtype", args->raw_dtype_text,
                  "fp16 (default) | bf16 | fp32: the dtype of the rows a scheme keeps raw (KIVI's residual, KVarN's "
                  "sink and open tile, sink=N; docs/spec.md rule C9)");
  cmd->callback([args] {
    args->raw_dtype = sim::parse_raw_dtype(args->raw_dtype_text);
    args->schemes = scheme_list(args->scheme_args);
    args->tokens.clear();
    for (const std::string& text : args->token_texts) args->tokens.push_back(sim::parse_token_count(text));
    run_memory(*args);
  });
}

}  // namespace dgq::cli

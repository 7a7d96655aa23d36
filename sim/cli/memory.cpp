// `dgq memory`: exact KV-cache bytes (K and V, all layers and KV heads) per scheme for a
// model shape and context lengths, from Scheme::planned_bytes (DGQ: its upper bound at the
// segment budget), for fp16 K/V; the rows a scheme keeps raw (KIVI's residual, KVarN's sink and
// open tile, sink=N) are counted in --raw-dtype (docs/spec.md rule C9: fp16 by default, as
// deployments hold them). --json PATH also writes the same rows machine-readably. The table names each
// scheme as it was asked for (the family alone by default); the JSON also keeps the canonical spec.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <toml++/toml.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"
#include "dgq/sim/model/model_shapes.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "number_options.hpp"

namespace dgq::cli {

namespace {

// A shape as given: --model's entry of the table or --config's file, then
// --layers/--kv-heads/--head-dim over it; title names the source in the table's heading.
struct Shape {
  int layers = 0, kv_heads = 0, head_dim = 0;
  std::string title;
};

struct MemoryArgs {
  std::string model;
  std::string config_path;  // a Hugging Face config.json or a GGUF; empty: --model or the three numbers
  Shape shape;
  std::vector<std::string> token_texts = {"8k", "32k", "128k"};  // as typed: 8192, 8k, 1m
  std::vector<std::int64_t> tokens;                              // parsed from token_texts
  bool article_note = false;  // --article-note: the source article's 128K figures beside the table
  SchemeListArgs scheme_args;        // --scheme SPEC ... (or the deprecated --schemes LIST)
  std::vector<std::string> schemes;  // resolved from scheme_args; empty: every family
  std::string json_path;  // empty: console only
  std::string raw_dtype_text = "fp16";  // --raw-dtype
  DType raw_dtype = DType::f16;
};

struct MemoryRow {
  std::int64_t tokens = 0;
  std::string scheme;  // canonical spec (every parameter), for --json
  std::string label;   // as asked (the family when no spec was given), for the table
  std::uint64_t bytes = 0;
  double ratio_vs_fp16 = 0.0;
};

Shape resolve_shape(const MemoryArgs& a) {
  Shape s;
  if (!a.model.empty() && !a.config_path.empty())
    throw ParameterError("memory: give --model or --config, not both");
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

// The schemes of the table: those asked for, each refused by name when it cannot hold heads of
// s.head_dim channels; by default every family that can, the others named in `left_out`.
std::vector<std::string> table_specs(const MemoryArgs& a, const Shape& s, std::vector<std::string>& left_out) {
  if (a.schemes.empty()) {
    std::vector<std::string> families;
    for (const std::string& family : scheme_families()) {
      if (sim::head_dim_refusal(family, s.head_dim).empty()) {
        families.push_back(family);
      } else {
        left_out.push_back(family);
      }
    }
    return families;
  }
  for (const std::string& spec : a.schemes) {
    if (const std::string refused = sim::head_dim_refusal(spec, s.head_dim); !refused.empty())
      throw ParameterError("memory: head_dim " + std::to_string(s.head_dim) + ": " + refused);
  }
  return a.schemes;
}

// a * b, refused rather than wrapped past 2^64 (2^20 layers x 2^20 heads x 2^40 tokens).
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const Shape& s, std::int64_t tokens) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw ParameterError("memory: " + std::to_string(s.layers) + " layers x " + std::to_string(s.kv_heads) +
                         " KV heads x " + std::to_string(tokens) + " tokens x head_dim " + std::to_string(s.head_dim) +
                         " is more than 2^64 bytes");
  return product;
}

std::vector<MemoryRow> memory_rows(const std::vector<std::string>& specs, const MemoryArgs& a, const Shape& s) {
  std::vector<std::unique_ptr<Scheme>> schemes;
  for (const auto& spec : specs) schemes.push_back(make_scheme(spec));
  std::vector<MemoryRow> rows;
  for (const std::int64_t tokens : a.tokens) {
    const auto units = static_cast<std::uint64_t>(s.layers) * static_cast<std::uint64_t>(s.kv_heads);
    const std::uint64_t elements = checked_product(units, static_cast<std::uint64_t>(tokens) * s.head_dim, s, tokens);
    const std::uint64_t fp16 = checked_product(elements, 4, s, tokens);  // K and V, 2 bytes each
    for (std::size_t i = 0; i < schemes.size(); ++i) {
      const Scheme& scheme = *schemes[i];
      // Rule C9: a role that keeps rows raw holds its rows in the raw dtype.
      const auto role_bytes = [&](TensorRole role) {
        const DType rows = scheme.keeps_raw_rows(role) ? a.raw_dtype : DType::f16;
        return scheme.planned_bytes(tokens, s.head_dim, rows, role);
      };
      const std::uint64_t head_bytes = role_bytes(TensorRole::key) + role_bytes(TensorRole::value);
      const std::uint64_t bytes = checked_product(units, head_bytes, s, tokens);
      rows.push_back({tokens, scheme.spec(), specs[i], bytes,
                      bytes ? static_cast<double>(fp16) / static_cast<double>(bytes) : 0.0});
    }
  }
  return rows;
}

void print_left_out(const Shape& s, const std::vector<std::string>& left_out) {
  if (left_out.empty()) return;
  std::string names;
  for (const std::string& family : left_out) names += (names.empty() ? "" : ", ") + family;
  std::printf("not listed (they cannot hold head_dim %d; `dgq memory --scheme FAMILY` says why): %s\n", s.head_dim,
              names.c_str());
}

void print_rows(const Shape& s, DType raw_dtype, const std::vector<MemoryRow>& rows) {
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

// {"format": "dgq-memory", "model", "layers", "kv_heads", "head_dim", "input_dtype", "raw_dtype",
//  "rows": [{"tokens", "scheme", "bytes", "gib", "gb", "ratio_vs_fp16"}]}, written to
// PATH.partial and renamed so that an interrupted run leaves no complete-looking file.
void write_json(const std::string& path, const MemoryArgs& a, const Shape& s, const std::vector<MemoryRow>& rows) {
  toml::array out_rows;
  for (const auto& row : rows)
    out_rows.push_back(toml::table{{"tokens", row.tokens},
                                   {"scheme", row.scheme},
                                   {"asked", row.label},
                                   {"bytes", static_cast<std::int64_t>(row.bytes)},
                                   {"gib", static_cast<double>(row.bytes) / 1073741824.0},
                                   {"gb", static_cast<double>(row.bytes) / 1e9},
                                   {"ratio_vs_fp16", row.ratio_vs_fp16}});
  const toml::table doc{{"format", "dgq-memory"}, {"model", a.model},       {"layers", s.layers},
                        {"kv_heads", s.kv_heads}, {"head_dim", s.head_dim}, {"input_dtype", "f16"},
                        {"raw_dtype", std::string(dtype_name(a.raw_dtype))}, {"rows", out_rows}};
  std::ostringstream text;
  text << toml::json_formatter{doc} << "\n";
  dgq::sim::write_text_file(path, text.str());
}

void run_memory(const MemoryArgs& a) {
  const Shape s = resolve_shape(a);
  std::vector<std::string> left_out;
  const std::vector<std::string> specs = table_specs(a, s, left_out);
  const auto rows = memory_rows(specs, a, s);
  print_rows(s, a.raw_dtype, rows);
  print_left_out(s, left_out);
  if (!a.json_path.empty()) write_json(a.json_path, a, s, rows);
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
  add_scheme_list_options(*cmd, args->scheme_args, scheme_option_help("scheme specs (repeatable; default: every family)"));
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

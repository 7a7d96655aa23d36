// `dgq memory --json` (memory_table.hpp): written by toml++'s JSON formatter, never by hand.
#include "dgq/sim/memory/memory_table.hpp"

#include <sstream>

#include <toml++/toml.h>

#include "dgq/sim/files/output/text_output.hpp"

namespace dgq::sim {

void write_memory_json(const std::string& path, const std::string& model, const MemoryTable& table) {
  const CacheShape& s = table.shape;
  toml::array out_rows;
  for (const auto& row : table.rows)
    out_rows.push_back(toml::table{{"tokens", row.tokens},
                                   {"scheme", row.scheme},
                                   {"asked", row.label},
                                   {"bytes", static_cast<std::int64_t>(row.bytes)},
                                   {"gib", static_cast<double>(row.bytes) / 1073741824.0},
                                   {"gb", static_cast<double>(row.bytes) / 1e9},
                                   {"ratio_vs_fp16", row.ratio_vs_fp16}});
  const toml::table doc{{"format", "dgq-memory"},
                        {"model", model},
                        {"layers", s.layers},
                        {"kv_heads", s.kv_heads},
                        {"head_dim", s.head_dim},
                        {"input_dtype", "f16"},
                        {"raw_dtype", std::string(dtype_name(table.raw_dtype))},
                        {"rows", out_rows}};
  std::ostringstream text;
  text << toml::json_formatter{doc} << "\n";
  write_text_file(path, text.str());
}

}  // namespace dgq::sim

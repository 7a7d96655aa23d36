#pragma once
// The table of `dgq memory`: exact KV-cache bytes (K and V, all layers and KV heads) per scheme
// and context length, from Scheme::planned_bytes (DGQ: its upper bound at the segment budget),
// for fp16 K/V; the rows a scheme keeps raw (KIVI's residual, KVarN's sink and open tile,
// sink=N) are counted in the raw dtype (docs/spec.md rule C9).
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq::sim {

// A cache's attention shape; title names its source (a model, a config file) for the heading.
struct CacheShape {
  int layers = 0, kv_heads = 0, head_dim = 0;
  std::string title;
};

struct MemoryRow {
  std::int64_t tokens = 0;
  std::string scheme;  // canonical spec (every parameter), for --json
  std::string label;   // as asked (the family when no spec was given), for the table
  std::uint64_t bytes = 0;
  double ratio_vs_fp16 = 0.0;
};

struct MemoryTable {
  CacheShape shape;
  DType raw_dtype = DType::f16;
  std::vector<MemoryRow> rows;        // context lengths in the order asked, schemes within each
  std::vector<std::string> left_out;  // the families that cannot hold heads of shape.head_dim
};

// The rows of the schemes asked for (each refused by name, as ParameterError, when it cannot hold
// heads of shape.head_dim channels), or with none asked, of every family that can, the others in
// left_out. ParameterError too for a cache of more than 2^64 bytes.
MemoryTable memory_table(const CacheShape& shape, const std::vector<std::string>& schemes,
                         const std::vector<std::int64_t>& tokens, DType raw_dtype);

// {"format": "dgq-memory", "model", "layers", "kv_heads", "head_dim", "input_dtype", "raw_dtype",
//  "rows": [{"tokens", "scheme", "asked", "bytes", "gib", "gb", "ratio_vs_fp16"}]}, written to
// PATH.partial and renamed so that an interrupted run leaves no complete-looking file.
void write_memory_json(const std::string& path, const std::string& model, const MemoryTable& table);

}  // namespace dgq::sim

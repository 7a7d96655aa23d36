// The rows of `dgq memory` (memory_table.hpp).
#include "dgq/sim/memory/memory_table.hpp"

#include <memory>

#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"

namespace dgq::sim {
namespace {

// The schemes of the table: those asked for, each refused by name when it cannot hold heads of
// head_dim channels; by default every family that can, the others named in `left_out`.
std::vector<std::string> table_specs(const std::vector<std::string>& asked, int head_dim,
                                     std::vector<std::string>& left_out) {
  if (asked.empty()) {
    std::vector<std::string> families;
    for (const std::string& family : scheme_families()) {
      if (head_dim_refusal(family, head_dim).empty()) {
        families.push_back(family);
      } else {
        left_out.push_back(family);
      }
    }
    return families;
  }
  for (const std::string& spec : asked) {
    if (const std::string refused = head_dim_refusal(spec, head_dim); !refused.empty())
      throw ParameterError("memory: head_dim " + std::to_string(head_dim) + ": " + refused);
  }
  return asked;
}

// a * b, refused rather than wrapped past 2^64 (2^20 layers x 2^20 heads x 2^40 tokens).
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const CacheShape& s, std::int64_t tokens) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw ParameterError("memory: " + std::to_string(s.layers) + " layers x " + std::to_string(s.kv_heads) +
                         " KV heads x " + std::to_string(tokens) + " tokens x head_dim " + std::to_string(s.head_dim) +
                         " is more than 2^64 bytes");
  return product;
}

std::vector<MemoryRow> memory_rows(const std::vector<std::string>& specs, const std::vector<std::int64_t>& tokens_list,
                                   const CacheShape& s, DType raw_dtype) {
  std::vector<std::unique_ptr<Scheme>> schemes;
  for (const auto& spec : specs) schemes.push_back(make_scheme(spec));
  std::vector<MemoryRow> rows;
  for (const std::int64_t tokens : tokens_list) {
    const auto units = static_cast<std::uint64_t>(s.layers) * static_cast<std::uint64_t>(s.kv_heads);
    const std::uint64_t elements = checked_product(units, static_cast<std::uint64_t>(tokens) * s.head_dim, s, tokens);
    const std::uint64_t fp16 = checked_product(elements, 4, s, tokens);  // K and V, 2 bytes each
    for (std::size_t i = 0; i < schemes.size(); ++i) {
      const Scheme& scheme = *schemes[i];
      // Rule C9: a role that keeps rows raw holds its rows in the raw dtype.
      const auto role_bytes = [&](TensorRole role) {
        const DType rows_dtype = scheme.keeps_raw_rows(role) ? raw_dtype : DType::f16;
        return scheme.planned_bytes(tokens, s.head_dim, rows_dtype, role);
      };
      const std::uint64_t head_bytes = role_bytes(TensorRole::key) + role_bytes(TensorRole::value);
      const std::uint64_t bytes = checked_product(units, head_bytes, s, tokens);
      rows.push_back({tokens, scheme.spec(), specs[i], bytes,
                      bytes ? static_cast<double>(fp16) / static_cast<double>(bytes) : 0.0});
    }
  }
  return rows;
}

}  // namespace

MemoryTable memory_table(const CacheShape& shape, const std::vector<std::string>& schemes,
                         const std::vector<std::int64_t>& tokens, DType raw_dtype) {
  MemoryTable table{shape, raw_dtype, {}, {}};
  const std::vector<std::string> specs = table_specs(schemes, shape.head_dim, table.left_out);
  table.rows = memory_rows(specs, tokens, shape, raw_dtype);
  return table;
}

}  // namespace dgq::sim

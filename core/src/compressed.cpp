// The Scheme API's value types (dgq/scheme.hpp) and the checks on them (dgq/part_checks.hpp).
#include <string>
#include <utility>

#include "dgq/scheme.hpp"

#include "dgq/errors.hpp"
#include "dgq/part_checks.hpp"

namespace dgq {

std::string_view role_name(TensorRole r) { return r == TensorRole::key ? "k" : "v"; }

Compressed start_compressed(std::string spec, ConstTensor x, TensorRole role) {
  Compressed c;
  c.scheme = std::move(spec);
  c.tokens = x.tokens;
  c.channels = x.channels;
  c.dtype = x.dtype;
  c.role = role;
  return c;
}

std::uint64_t Compressed::total_bytes() const {
  std::uint64_t total = 0;
  for (const Part& p : parts) total += p.bytes.size();
  return total;
}

std::uint64_t Compressed::part_bytes(std::string_view name) const {
  const Part* p = find(name);
  return p ? p->bytes.size() : 0;
}

const Part* Compressed::find(std::string_view name) const {
  for (const Part& p : parts) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const std::vector<std::uint32_t>& Compressed::segment_edges() const {
  static const std::vector<std::uint32_t> none;
  return diagnostics.segments ? diagnostics.segments->edges : none;
}

}  // namespace dgq

namespace dgq::schemes {

void check_decompress_target(const Compressed& c, MutTensor out, std::string_view spec) {
  if (c.scheme != spec) {
    throw InputError(std::string(spec) + ": cannot decompress data made by scheme '" + c.scheme + "'");
  }
  if (c.tokens < 0 || c.channels < 0) {
    throw InputError(std::string(spec) + ": negative shape [" + std::to_string(c.tokens) + ", " +
                     std::to_string(c.channels) + "]");
  }
  if (out.tokens != c.tokens || out.channels != c.channels || out.dtype != c.dtype) {
    throw InputError(std::string(spec) + ": output is [" + std::to_string(out.tokens) + ", " +
                     std::to_string(out.channels) + "] " + std::string(dtype_name(out.dtype)) +
                     ", compressed data is [" + std::to_string(c.tokens) + ", " + std::to_string(c.channels) + "] " +
                     std::string(dtype_name(c.dtype)));
  }
}

const Part& expect_part(const Compressed& c, std::string_view name, std::uint64_t expected) {
  const Part* p = c.find(name);
  if (p == nullptr) {
    throw InputError(c.scheme + ": part '" + std::string(name) + "' is missing");
  }
  if (p->bytes.size() != expected) {
    throw InputError(c.scheme + ": part '" + std::string(name) + "' has " + std::to_string(p->bytes.size()) +
                     " bytes, expected " + std::to_string(expected));
  }
  return *p;
}

}  // namespace dgq::schemes

// The Scheme API's value types (dgq/scheme.hpp).
#include <string>
#include <utility>

#include "dgq/scheme.hpp"

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

}  // namespace dgq

// config_hash(): FNV-1a 64 of a canonical configuration text. Not a cryptographic hash: it
// tells configurations apart for resume and merge, it does not defend against forgery.
#include <cstdint>
#include <cstdio>

#include "dgq/sim/files/provenance/provenance.hpp"

namespace dgq::sim {

std::string config_hash(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace dgq::sim

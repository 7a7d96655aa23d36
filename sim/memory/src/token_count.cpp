// Context lengths as `dgq memory --tokens` takes them: 8192, 8k, 128K, 1m.
#include <cctype>
#include <cstdint>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"

namespace dgq::sim {

namespace {

constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;  // far beyond any context; keeps bytes in 64 bits

[[noreturn]] void refuse(const std::string& text) {
  throw ParameterError("'" + text +
                       "' is not a token count (a whole number, optionally with k or m: 8k = 8192, 1m = 1048576)");
}

std::int64_t suffix_factor(char c) {
  switch (c) {
    case 'k':
    case 'K': return 1024;
    case 'm':
    case 'M': return 1024 * 1024;
    default: return 0;
  }
}

}  // namespace

std::int64_t parse_token_count(const std::string& text) {
  std::string digits = text;
  std::int64_t factor = 1;
  if (!digits.empty() && suffix_factor(digits.back()) != 0) {
    factor = suffix_factor(digits.back());
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 13) refuse(text);
  std::int64_t value = 0;
  for (const char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) refuse(text);
    value = value * 10 + (c - '0');
  }
  if (value > kMaxTokens / factor) refuse(text);
  if (value == 0) throw ParameterError("must be >= 1, got " + text);
  return value * factor;
}

}  // namespace dgq::sim

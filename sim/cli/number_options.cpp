#include "number_options.hpp"

#include <charconv>
#include <string_view>

namespace dgq::cli {

namespace {

// Digits with an optional leading '-': what from_chars reads in full, so that "3.5", "1e3",
// "0x10" and "+2" are not numbers here (CLI11 would take some of them).
bool is_decimal(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool is_type_limit(std::int64_t max) {
  return max == std::numeric_limits<int>::max() || max == std::numeric_limits<std::int64_t>::max();
}

std::string domain(std::int64_t min, std::int64_t max) {
  if (is_type_limit(max)) return ">= " + std::to_string(min);
  return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

// A decimal's place against [min, max]: -1 below, 0 inside, +1 above (beyond int64 included).
int place(const std::string& text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc()) return text.front() == '-' ? -1 : 1;
  return value < min ? -1 : value > max ? 1 : 0;
}

std::string refusal(const std::string& text, std::int64_t min, std::int64_t max, const std::string& meaning) {
  const std::string note = meaning.empty() ? "" : " (" + meaning + ")";
  if (!is_decimal(text)) return "must be a whole number " + domain(min, max) + note + ", got '" + text + "'";
  const int where = place(text, min, max);
  if (where == 0) return "";
  const bool past_type_limit = where > 0 && is_type_limit(max);
  return "must be " + domain(min, max) + note + (past_type_limit ? " and at most " + std::to_string(max) : "") +
         ", got " + text;
}

}  // namespace

CLI::Validator whole_number(std::int64_t min, std::int64_t max, const std::string& meaning) {
  // The description follows the type in --help: "--threads INT:in [0, 1024]".
  return CLI::Validator([=](const std::string& text) { return refusal(text, min, max, meaning); }, domain(min, max),
                        "whole number");
}

CLI::Validator whole_number_u64() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        constexpr const char* kDomain = "in [0, 18446744073709551615]";
        if (!is_decimal(text)) return std::string("must be a whole number ") + kDomain + ", got '" + text + "'";
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.front() == '-' || ec != std::errc()) return std::string("must be ") + kDomain + ", got " + text;
        return "";
      },
      "", "unsigned whole number");
}

}  // namespace dgq::cli

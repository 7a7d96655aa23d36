#pragma once
// Parsing of scheme specs "family[:key=value,...]". Each family reads the keys it knows
// (with defaults and ranges); finish() then rejects whatever key is left, so a typo never
// silently falls back to a default.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dgq::schemes {

class SpecArgs {
 public:
  // Throws ParameterError for a malformed list (missing '=', empty key, duplicate key).
  explicit SpecArgs(std::string_view spec);

  const std::string& family() const { return family_; }

  // Each take_* removes the key; a missing key gives the default. Out-of-range or
  // unparseable values throw ParameterError naming family, key and value.
  int take_int(std::string_view key, int fallback, int min, int max);
  float take_float(std::string_view key, float fallback);
  std::string take_string(std::string_view key, std::string_view fallback);

  // Throws ParameterError naming the first key nobody took, the closest of `valid` (the keys
  // the family and the modifiers read) and all of them: the user typed a name, so the fix is
  // one of those names.
  void finish(const std::vector<std::string>& valid) const;

  // "family: " prefix for error messages.
  std::string where(std::string_view key) const;

 private:
  std::string family_;
  std::map<std::string, std::string, std::less<>> values_;
};

// Shortest decimal text that parses back to exactly v (std::to_chars).
std::string format_float(float v);

}  // namespace dgq::schemes

#include "spec_args.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

#include "dgq/errors.hpp"
#include "dgq/spelling_suggestion.hpp"

namespace dgq::schemes {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

SpecArgs::SpecArgs(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  family_ = std::string(trim(spec.substr(0, colon)));
  if (family_.empty()) throw ParameterError("scheme spec '" + std::string(spec) + "' has no family name");
  if (colon == std::string_view::npos) return;
  std::string_view rest = spec.substr(colon + 1);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw ParameterError(family_ + ": parameter '" + std::string(item) + "' is not key=value");
    }
    const std::string key(trim(item.substr(0, eq)));
    if (key.empty()) throw ParameterError(family_ + ": parameter '" + std::string(item) + "' has no key");
    if (!values_.emplace(key, std::string(trim(item.substr(eq + 1)))).second) {
      throw ParameterError(family_ + ": parameter '" + key + "' given twice");
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
}

std::string SpecArgs::where(std::string_view key) const { return family_ + ": parameter '" + std::string(key) + "'"; }

int SpecArgs::take_int(std::string_view key, int fallback, int min, int max) {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string text = it->second;
  values_.erase(it);
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw ParameterError(where(key) + " = '" + text + "' is not an integer");
  }
  if (v < min || v > max) {
    throw ParameterError(where(key) + " = " + text + " is outside [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return v;
}

float SpecArgs::take_float(std::string_view key, float fallback) {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string text = it->second;
  values_.erase(it);
  float v = 0.0f;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw ParameterError(where(key) + " = '" + text + "' is not a finite number");
  }
  return v;
}

std::string SpecArgs::take_string(std::string_view key, std::string_view fallback) {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::string(fallback);
  std::string v = it->second;
  values_.erase(it);
  return v;
}

void SpecArgs::finish(const std::vector<std::string>& valid) const {
  if (values_.empty()) return;
  const std::string& key = values_.begin()->first;
  std::string message = family_ + ": unknown parameter '" + key + "'";
  if (const std::string guess = closest_spelling(key, valid); !guess.empty())
    message += ": did you mean '" + guess + "'?";
  std::string listed;
  for (const std::string& v : valid) listed += (listed.empty() ? "" : ", ") + v;
  message += " (" + family_ + " takes " + (listed.empty() ? std::string("no parameters") : listed) + ")";
  throw ParameterError(message);
}

std::string format_float(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

}  // namespace dgq::schemes

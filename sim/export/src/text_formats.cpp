// The text of exported rows: CSV (RFC 4180 quoting, LF line ends, a header row) and JSON Lines
// (one object per row, every column a key). Numbers round-trip: the shortest text that reads
// back to the same double (std::to_chars).
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "export_rows.hpp"

namespace dgq::sim {

std::string export_number(double value) {
  // pandas reads inf, -inf and nan as floats; a "-nan" from to_chars would be a text.
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  // 64 bytes hold any shortest double ("-2.2250738585072014e-308" is 24).
  if (error != std::errc()) throw std::logic_error("export_number: to_chars failed");
  std::string text(buffer, end);
  // "2" would make an all-integral float column an integer column in pandas.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string csv_field(const ExportValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return export_number(*d);
  const std::string& text = std::get<std::string>(value);
  // An empty text is quoted so that it differs from an absent value.
  if (!text.empty() && text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

namespace exporting {

std::string csv_header(const std::vector<Column>& columns) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) line += ',';
    line += csv_field(columns[i].name);
  }
  return line + "\n";
}

std::string csv_row(const std::vector<const ExportValue*>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    if (cells[i]) line += csv_field(*cells[i]);
  }
  return line + "\n";
}

std::string jsonl_row(const std::vector<Column>& columns, const std::vector<const ExportValue*>& cells) {
  // JSON has no inf or NaN: they are null, as an absent value is (the CSV keeps them).
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    nlohmann::ordered_json& slot = object[columns[i].name];
    if (!cells[i]) continue;
    if (const auto* n = std::get_if<std::int64_t>(cells[i]))
      slot = *n;
    else if (const auto* d = std::get_if<double>(cells[i])) {
      if (std::isfinite(*d)) slot = *d;
    } else if (const auto* s = std::get_if<std::string>(cells[i]))
      slot = *s;
  }
  return object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace exporting

}  // namespace dgq::sim

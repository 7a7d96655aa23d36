// `dgq export`'s text: numbers that read back to the same double, RFC 4180 quoting, and the
// formats (dgq/sim/export/export.hpp).
#include <catch2/catch.hpp>

#include <bit>
#include <cstdlib>
#include <limits>

#include "dgq/errors.hpp"
#include "dgq/sim/export/export.hpp"

using namespace dgq;

namespace {

// RFC 4180's reading of one field as written by csv_field (the test's own decoder).
std::string unquote_csv_field(const std::string& field) {
  if (field.empty() || field.front() != '"') return field;
  REQUIRE(field.size() >= 2);
  REQUIRE(field.back() == '"');
  std::string out;
  for (std::size_t i = 1; i + 1 < field.size(); ++i) {
    out += field[i];
    if (field[i] == '"') {
      REQUIRE(field[i + 1] == '"');  // a lone quote inside would end the field
      ++i;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("export numbers read back to the same double, bit for bit", "[export]") {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           2.0 / 3.0,
                           1e-300,
                           5e-324,
                           2.2250738585072014e-308,
                           std::numeric_limits<double>::max(),
                           -0.0,
                           123456789.125,
                           1e20,
                           0.30000000000000004,
                           -7.5e-7,
                           9007199254740993.0};
  for (const double v : values) {
    const std::string text = sim::export_number(v);
    CAPTURE(v, text);
    const double back = std::strtod(text.c_str(), nullptr);
    CHECK(std::bit_cast<std::uint64_t>(back) == std::bit_cast<std::uint64_t>(v));
    CHECK(text.find_first_of(".e") != std::string::npos);  // never reads as an integer
  }
}

TEST_CASE("export numbers are the shortest text, integral values keep a '.0'", "[export]") {
  CHECK(sim::export_number(0.1) == "0.1");
  CHECK(sim::export_number(2.0) == "2.0");
  CHECK(sim::export_number(-0.0) == "-0.0");
  CHECK(sim::export_number(1e20) == "1e+20");
  CHECK(sim::export_number(8.5) == "8.5");
}

TEST_CASE("export writes inf, -inf and nan as pandas reads them", "[export]") {
  CHECK(sim::export_number(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(sim::export_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(sim::export_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(sim::export_number(-std::numeric_limits<double>::quiet_NaN()) == "nan");  // to_chars would say -nan
}

TEST_CASE("export CSV fields are quoted as RFC 4180 says, and only then", "[export]") {
  CHECK(sim::csv_field(sim::ExportValue{}) == "");
  CHECK(sim::csv_field(sim::ExportValue{std::string()}) == "\"\"");  // empty text differs from absent
  CHECK(sim::csv_field(sim::ExportValue{std::int64_t{-42}}) == "-42");
  CHECK(sim::csv_field(sim::ExportValue{1.5}) == "1.5");
  CHECK(sim::csv_field(sim::ExportValue{std::string("q8_0@code")}) == "q8_0@code");
  CHECK(sim::csv_field(sim::ExportValue{std::string("dgq:win=16,group_ratio=0.75")}) ==
        "\"dgq:win=16,group_ratio=0.75\"");
  CHECK(sim::csv_field(sim::ExportValue{std::string("say \"hi\"")}) == "\"say \"\"hi\"\"\"");
  for (const std::string text : {"a,b", "a\"b", "line\nbreak", "cr\rhere", "\"", ",", "plain", "x\"\",\n\"y"}) {
    CAPTURE(text);
    const std::string field = sim::csv_field(sim::ExportValue{text});
    CHECK(unquote_csv_field(field) == text);
  }
}

TEST_CASE("export formats: csv, jsonl and parquet; anything else is refused with the list", "[export]") {
  CHECK(sim::parse_export_format("csv") == sim::ExportFormat::csv);
  CHECK(sim::parse_export_format("jsonl") == sim::ExportFormat::jsonl);
  CHECK(sim::parse_export_format("parquet") == sim::ExportFormat::parquet);
  REQUIRE_THROWS_MATCHES(sim::parse_export_format("xlsx"), ParameterError,
                         Catch::Matchers::Message("'xlsx' is not an export format: csv, jsonl or parquet"));
}

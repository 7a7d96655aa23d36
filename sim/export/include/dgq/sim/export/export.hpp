#pragma once
// `dgq export`: any dgq results file as one tidy table (docs/results-format.md, "Export"):
// replay and sweep results one row per (run, layer, q head), eval sweeps and `dgq eval` /
// passkey results one row per run, written as CSV, JSON Lines or Parquet.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <variant>

namespace dgq::sim {

// One cell: absent (the run does not record it), an integer, a float or a text.
using ExportValue = std::variant<std::monostate, std::int64_t, double, std::string>;

enum class ExportFormat { csv, jsonl, parquet };

// "csv", "jsonl" or "parquet"; ParameterError for anything else.
ExportFormat parse_export_format(const std::string& name);

// What was written: the data rows (the CSV header not counted) and the columns.
struct ExportSummary {
  std::size_t rows = 0, columns = 0;
};

// Writes every complete run of the results file at `path` to `out` (Parquet: a binary stream;
// export/parquet_table.hpp says which subset). The whole file is read and checked before the
// first byte is written, so a bad file leaves `out` empty. Errors:
// InputError naming the file (and the run and dataset) for a file that is not a dgq results
// file of a known format, a run whose tables disagree with its attributes, or no complete run.
ExportSummary export_results(const std::string& path, ExportFormat format, std::ostream& out);
// The same into the file `output`, written as OUTPUT.partial and renamed once complete (a failed
// export leaves neither; a device or pipe is written through once the table is whole).
// ParameterError when `output` is the results file itself; InputError when it holds runs.
ExportSummary export_results_to_file(const std::string& path, ExportFormat format, const std::string& output);

// Shortest text that reads back to the same double (std::to_chars), with ".0" added to
// integral values so a reader keeps the column floating-point; "inf", "-inf", "nan".
std::string export_number(double value);
// One CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled). An
// absent value is the empty field, an empty text the quoted "".
std::string csv_field(const ExportValue& value);

}  // namespace dgq::sim

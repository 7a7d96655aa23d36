// `dgq export`: picks the layout from the file's `format` attribute, gathers the columns of
// every row (first pass: the whole file is read and checked), then writes the rows (second pass).
// Two passes keep memory to one run's rows, whatever the size of a sweep.
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "dgq/errors.hpp"
#include "dgq/sim/export/export.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/output/output_target.hpp"
#include "dgq/sim/files/output/partial_file.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "export_rows.hpp"
#include "parquet_table.hpp"

namespace dgq::sim {

namespace {

using exporting::Column;
using exporting::Layout;
using exporting::Row;
using exporting::RowSink;

constexpr const char* kEvalFormat = "dgq-eval";
constexpr const char* kPasskeyFormat = "dgq-passkey-results";

void each_row(hid_t file, const std::string& path, const RowSink& sink) {
  const std::string format =
      h5::has_attribute(file, "format") ? h5::read_string_attribute(file, "format", path) : std::string();
  if (format == kResultsFormat) return exporting::results_rows(file, path, sink);
  if (format == kEvalFormat) return exporting::eval_rows(file, path, Layout::eval, sink);
  if (format == kPasskeyFormat) return exporting::eval_rows(file, path, Layout::passkey, sink);
  throw InputError(path + ": " + (format.empty() ? "no attribute 'format'" : "attribute 'format' is '" + format + "'") +
                   ", not a results file; dgq export reads " + kResultsFormat + " (replay, sweep, merge), " +
                   kEvalFormat + " and " + kPasskeyFormat + " files");
}

std::vector<Column> gather_columns(hid_t file, const std::string& path) {
  std::set<Column> columns;
  each_row(file, path, [&](const Row& row) {
    for (const auto& cell : row) columns.insert(cell.column);
  });
  std::set<std::string> names;
  for (const Column& c : columns)
    if (!names.insert(c.name).second)
      throw InputError(path + ": column '" + c.name + "' would appear twice (an attribute named like a table column)");
  return {columns.begin(), columns.end()};
}

// Parquet is written column by column, so the whole table is held (one value per cell).
ExportSummary write_parquet_table(hid_t file, const std::string& path, const std::vector<Column>& columns,
                                  const std::unordered_map<std::string, std::size_t>& position, std::ostream& out) {
  std::vector<exporting::ParquetColumn> table(columns.size());
  for (std::size_t i = 0; i < columns.size(); ++i) table[i].name = columns[i].name;
  ExportSummary summary{0, columns.size()};
  each_row(file, path, [&](const Row& row) {
    ++summary.rows;
    for (auto& column : table) column.values.emplace_back();
    for (const auto& cell : row) table[position.at(cell.column.name)].values.back() = cell.value;
  });
  exporting::write_parquet(table, out);
  return summary;
}

}  // namespace

ExportFormat parse_export_format(const std::string& name) {
  if (name == "csv") return ExportFormat::csv;
  if (name == "jsonl") return ExportFormat::jsonl;
  if (name == "parquet") return ExportFormat::parquet;
  throw ParameterError("'" + name + "' is not an export format: csv, jsonl or parquet");
}

ExportSummary export_results(const std::string& path, ExportFormat format, std::ostream& out) {
  h5::Handle file = h5::open_file_readonly(path);
  const std::vector<Column> columns = gather_columns(file.get(), path);
  std::unordered_map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < columns.size(); ++i) position.emplace(columns[i].name, i);
  if (format == ExportFormat::parquet) return write_parquet_table(file.get(), path, columns, position, out);
  if (format == ExportFormat::csv) out << exporting::csv_header(columns);
  std::vector<const ExportValue*> cells(columns.size());
  ExportSummary summary{0, columns.size()};
  each_row(file.get(), path, [&](const Row& row) {
    ++summary.rows;
    std::fill(cells.begin(), cells.end(), nullptr);
    for (const auto& cell : row) cells[position.at(cell.column.name)] = &cell.value;
    out << (format == ExportFormat::csv ? exporting::csv_row(cells) : exporting::jsonl_row(columns, cells));
  });
  return summary;
}

ExportSummary export_results_to_file(const std::string& path, ExportFormat format, const std::string& output) {
  std::error_code ignored;
  if (std::filesystem::equivalent(path, output, ignored))
    throw ParameterError("-o " + output + ": that is the results file being exported; name another output");
  if (resolve_output(output).kind == OutputTarget::Kind::stream) {  // written through, whole
    std::ostringstream table;
    const ExportSummary summary = export_results(path, format, table);
    write_to_stream(output, table.str());
    return summary;
  }
  PartialFile guard(stage_output(output));
  ExportSummary summary;
  {
    std::ofstream out(guard.partial(), std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + guard.partial() + "'");
    summary = export_results(path, format, out);
    if (!out.flush()) throw Error("cannot write '" + guard.partial() + "'");
  }
  guard.commit();
  return summary;
}

}  // namespace dgq::sim

// Rows of `dgq eval` and passkey results (docs/eval.md, "Files" and "The passkey task"): one
// per scheme run /runs/<i>, in run order, the file's settings then the run's own attributes.
// These files are written whole (no `complete` flag): every run is exported.
#include <algorithm>
#include <set>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "export_rows.hpp"

namespace dgq::sim::exporting {

namespace {

// /runs/0, /runs/1, ...: run order is numeric ("10" after "9").
std::vector<std::int64_t> run_indices(hid_t runs, const std::string& where) {
  std::vector<std::int64_t> out;
  for (const std::string& name : child_names(runs, where)) {
    if (name.empty() || name.size() > 9 ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InputError(where + "/" + name + ": run groups of this file are named 0, 1, 2, ...");
    out.push_back(std::stoll(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void eval_rows(hid_t file, const std::string& path, Layout layout, const RowSink& sink) {
  const std::string where = path + ": /runs";
  if (!h5::link_exists(file, "runs")) throw InputError(where + ": missing (no run to export)");
  h5::Handle runs = h5::open_group(file, "runs", where);
  const std::vector<std::int64_t> indices = run_indices(runs.get(), where);
  if (indices.empty()) throw InputError(where + ": no run to export");
  std::vector<std::vector<std::pair<std::string, ExportValue>>> run_attributes;
  std::set<std::string> run_names;  // every attribute name a run has
  for (std::int64_t i : indices) {
    const std::string name = std::to_string(i);
    h5::Handle g = h5::open_group(runs.get(), name, where + "/" + name);
    run_attributes.push_back(scalar_attributes(g.get(), where + "/" + name));
    for (const auto& [attribute, value] : run_attributes.back()) run_names.insert(attribute);
  }
  Row file_cells;
  for (auto& [attribute, value] : scalar_attributes(file, path)) {
    if (attribute == "format" || attribute == "version") continue;  // the file's own format, not the run's
    // The root's provenance is the whole run's (every scheme); each run has its own.
    const std::string column_name = run_names.count(attribute) ? "file_" + attribute : attribute;
    file_cells.push_back({column(layout, Section::file, column_name), std::move(value)});
  }
  for (std::size_t r = 0; r < indices.size(); ++r) {
    Row row{{column(layout, Section::run, "run"), indices[r]}};
    row.insert(row.end(), file_cells.begin(), file_cells.end());
    for (auto& [attribute, value] : run_attributes[r])
      row.push_back({column(layout, Section::attributes, attribute), std::move(value)});
    sink(row);
  }
}

}  // namespace dgq::sim::exporting

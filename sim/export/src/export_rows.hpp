#pragma once
// Internals of `dgq export` (dgq/sim/export/export.hpp): the rows each kind of results file gives and
// the fixed order of their columns.
#include <hdf5.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dgq/sim/export/export.hpp"

namespace dgq::sim::exporting {

// Where a column stands in the table: columns sort by (section, rank, name). Sections are in
// table order; within one, the documented columns come in their documented order (rank = their
// index in export_columns.cpp's lists) and any other, e.g. an attribute a newer dgq wrote, after
// them in name order.
enum class Section {
  run,         // `run`: the run's group name (replay, sweeps) or index (eval, passkey)
  file,        // the root attributes of eval and passkey results
  attributes,  // the run's own scalar attributes
  index,       // layer, model_layer, q_head, kv_head
  k,           // k_<table>: the K reconstruction of the q head's KV head
  v,           // v_<table>
  attn,        // attn_<metric>: the q head's probe means
  clean,       // clean_<metric>: the same on clean keys (noisy traces)
};

// The columns of one layout, so that ranks come from that layout's documented list.
enum class Layout { replay, eval_sweep, eval, passkey };

struct Column {
  Section section;
  int rank;
  std::string name;
  bool operator<(const Column& o) const;
  bool operator==(const Column& o) const = default;
};
// The column for `name` in a section of a layout (its rank from the documented lists).
Column column(Layout layout, Section section, std::string name);

struct Cell {
  Column column;
  ExportValue value;
};
using Row = std::vector<Cell>;
// Receives the rows in output order. Each row holds its cells once; a column a row lacks is absent.
using RowSink = std::function<void(const Row&)>;

// Every scalar attribute of an HDF5 object, in name order (strings, integers incl. h5py's bool
// enum, floats incl. NaN and inf); array and compound attributes are left out.
std::vector<std::pair<std::string, ExportValue>> scalar_attributes(hid_t object, const std::string& context);

// The rows of a dgq-results file (replay runs, or eval-sweep runs: all of one kind).
void results_rows(hid_t file, const std::string& path, const RowSink& sink);
// The rows of a `dgq eval` (dgq-eval) or passkey (dgq-passkey-results) file.
void eval_rows(hid_t file, const std::string& path, Layout layout, const RowSink& sink);

// The text of a row in a format: CSV's header and rows, JSON Lines' objects.
std::string csv_header(const std::vector<Column>& columns);
std::string csv_row(const std::vector<const ExportValue*>& cells);
std::string jsonl_row(const std::vector<Column>& columns, const std::vector<const ExportValue*>& cells);

}  // namespace dgq::sim::exporting

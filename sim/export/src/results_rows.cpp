// Rows of a dgq-results file (docs/results-format.md, "Export"): a replay run gives one row per
// (replayed layer, q head), its KV head's K and V tables repeated on the q heads that share it;
// an eval-sweep run (kind = eval) gives one row of its attributes.
#include <string_view>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "export_rows.hpp"

namespace dgq::sim::exporting {

namespace {

constexpr std::string_view kTensorDatasets[][2] = {{"mse", "mse"},
                                                   {"snr_db", "snr_db"},
                                                   {"max_abs_err", "max_abs_err"},
                                                   {"rel_fro", "rel_fro"},
                                                   {"bytes", "bytes"},
                                                   {"original_bytes", "original_bytes"},
                                                   {"segments", "segments/count"}};

// A [rows, cols] table, integers as integers and floats as floats.
std::vector<ExportValue> read_table(hid_t group, const std::string& name, std::size_t rows, std::size_t cols,
                                    const std::string& context) {
  const std::string where = context + "/" + name;
  h5::Handle ds = h5::open_dataset(group, name, where);
  const auto shape = h5::dataset_shape(ds.get());
  if (shape != std::vector<hsize_t>{rows, cols})
    throw InputError(where + ": shape " + h5::shape_string(shape) + ", expected [" + std::to_string(rows) + ", " +
                     std::to_string(cols) + "] (layers, heads)");
  h5::check_stored_extent(ds.get(), where);
  h5::Handle type(h5::check(H5Dget_type(ds.get()), where), h5::Handle::Kind::datatype);
  std::vector<ExportValue> out;
  out.reserve(rows * cols);
  if (h5::is_integer_type(type.get())) {
    std::vector<std::int64_t> v(rows * cols);
    if (!v.empty()) h5::read_all(ds.get(), H5T_NATIVE_INT64, v.data(), where);
    for (std::int64_t x : v) out.emplace_back(x);
  } else if (H5Tget_class(type.get()) == H5T_FLOAT) {
    std::vector<double> v(rows * cols);
    if (!v.empty()) h5::read_all(ds.get(), H5T_NATIVE_DOUBLE, v.data(), where);
    for (double x : v) out.emplace_back(x);
  } else {
    throw InputError(where + ": expected numbers, found " + h5::describe_type(type.get()));
  }
  return out;
}

struct Table2 {
  Column column;
  std::vector<ExportValue> values;  // [layers, heads]
};

// The metric datasets of attn/ or clean/ (their probes/ subgroup holds the per-probe values).
std::vector<Table2> metric_tables(hid_t run, const std::string& group_name, Section section, std::size_t layers,
                                  std::size_t q_heads, const std::string& context) {
  std::vector<Table2> out;
  if (!h5::link_exists(run, group_name)) return out;
  const std::string where = context + "/" + group_name;
  h5::Handle g = h5::open_group(run, group_name, where);
  for (const std::string& name : child_names(g.get(), where)) {
    if (name == "probes") continue;
    out.push_back(
        {column(Layout::replay, section, group_name + "_" + name), read_table(g.get(), name, layers, q_heads, where)});
  }
  return out;
}

std::vector<Table2> tensor_tables(hid_t run, const char* role, Section section, std::size_t layers,
                                  std::size_t kv_heads, const std::string& context) {
  const std::string where = context + "/" + role;
  h5::Handle g = h5::open_group(run, role, where);
  std::vector<Table2> out;
  for (const auto& [column_name, dataset] : kTensorDatasets)
    out.push_back({column(Layout::replay, section, std::string(role) + "_" + std::string(column_name)),
                   read_table(g.get(), std::string(dataset), layers, kv_heads, where)});
  return out;
}

Row attribute_cells(hid_t run, Layout layout, const std::string& name, const std::string& where) {
  Row cells{{column(layout, Section::run, "run"), name}};
  for (auto& [attribute, value] : scalar_attributes(run, where)) {
    if (attribute == "complete") continue;  // 1 on every exported run
    cells.push_back({column(layout, Section::attributes, attribute), std::move(value)});
  }
  return cells;
}

std::int64_t positive_attribute(hid_t run, const char* name, const std::string& where) {
  const std::int64_t v = h5::read_int_attribute(run, name, where);
  if (v <= 0) throw InputError(where + ": attribute '" + name + "' = " + std::to_string(v) + ", expected > 0");
  return v;
}

// model_layers [nl]: the recorded model's index of each replayed
// layer. Older runs do not have it; their model layer is the trace layer.
std::vector<std::int64_t> model_layers(hid_t run, const std::vector<std::int64_t>& layers, const std::string& where) {
  if (!h5::link_exists(run, "model_layers")) return layers;
  auto ids = h5::read_int_vector(run, "model_layers", where + "/model_layers");
  if (ids.size() != layers.size())
    throw InputError(where + "/model_layers: " + std::to_string(ids.size()) + " entries for " +
                     std::to_string(layers.size()) + " layers");
  return ids;
}

void replay_run_rows(hid_t run, const std::string& name, const std::string& where, const RowSink& sink) {
  const Row head = attribute_cells(run, Layout::replay, name, where);
  const auto qh = static_cast<std::size_t>(positive_attribute(run, "num_q_heads", where));
  const auto kvh = static_cast<std::size_t>(positive_attribute(run, "num_kv_heads", where));
  if (qh % kvh != 0)
    throw InputError(where + ": num_q_heads " + std::to_string(qh) + " is not a multiple of num_kv_heads " +
                     std::to_string(kvh));
  const std::vector<std::int64_t> layers = h5::read_int_vector(run, "layers", where + "/layers");
  const std::vector<std::int64_t> model = model_layers(run, layers, where);
  const std::size_t nl = layers.size();
  std::vector<Table2> per_kv = tensor_tables(run, "k", Section::k, nl, kvh, where);
  for (Table2& t : tensor_tables(run, "v", Section::v, nl, kvh, where)) per_kv.push_back(std::move(t));
  std::vector<Table2> per_q = metric_tables(run, "attn", Section::attn, nl, qh, where);
  // The row count nl x qh comes from attributes; a stored [nl, qh] table is what bounds it.
  if (per_q.empty()) throw InputError(where + "/attn: no metric tables (every replay run has attn/kl, ...)");
  for (Table2& t : metric_tables(run, "clean", Section::clean, nl, qh, where)) per_q.push_back(std::move(t));
  const Column layer_col = column(Layout::replay, Section::index, "layer");
  const Column model_col = column(Layout::replay, Section::index, "model_layer");
  const Column q_col = column(Layout::replay, Section::index, "q_head");
  const Column kv_col = column(Layout::replay, Section::index, "kv_head");
  const std::size_t group = qh / kvh;  // q heads per KV head (GQA), as the replay maps them
  Row row;
  for (std::size_t l = 0; l < nl; ++l) {
    for (std::size_t h = 0; h < qh; ++h) {
      row = head;
      row.push_back({layer_col, layers[l]});
      row.push_back({model_col, model[l]});
      row.push_back({q_col, static_cast<std::int64_t>(h)});
      row.push_back({kv_col, static_cast<std::int64_t>(h / group)});
      for (const Table2& t : per_kv) row.push_back({t.column, t.values[l * kvh + h / group]});
      for (const Table2& t : per_q) row.push_back({t.column, t.values[l * qh + h]});
      sink(row);
    }
  }
}

bool is_eval_run(hid_t run, const std::string& where) {
  return h5::has_attribute(run, "kind") && h5::read_string_attribute(run, "kind", where) == "eval";
}

}  // namespace

void results_rows(hid_t file, const std::string& path, const RowSink& sink) {
  const RunListing listing = list_runs_in(file, path);
  if (listing.complete.empty())
    throw InputError(path + ": no complete run to export (" + std::to_string(listing.incomplete.size()) +
                     " incomplete)");
  h5::Handle runs = h5::open_group(file, "runs", path + ": /runs");
  // One table has one layout: a file mixing replay and eval-sweep runs (dgq merge of both) is
  // exported from its parts.
  std::string first_replay, first_eval;
  for (const std::string& name : listing.complete) {
    const std::string where = path + ": /runs/" + name;
    h5::Handle g = h5::open_group(runs.get(), name, where);
    std::string& first = is_eval_run(g.get(), where) ? first_eval : first_replay;
    if (first.empty()) first = name;
  }
  if (!first_replay.empty() && !first_eval.empty())
    throw InputError(path + ": holds replay runs (" + first_replay + ") and eval-sweep runs (" + first_eval +
                     ", kind = eval), which have different columns; export them from separate files");
  for (const std::string& name : listing.complete) {
    const std::string where = path + ": /runs/" + name;
    h5::Handle g = h5::open_group(runs.get(), name, where);
    if (first_eval.empty()) {
      replay_run_rows(g.get(), name, where, sink);
    } else {
      sink(attribute_cells(g.get(), Layout::eval_sweep, name, where));
    }
  }
}

}  // namespace dgq::sim::exporting

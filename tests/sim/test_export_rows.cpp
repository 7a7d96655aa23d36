// `dgq export`'s rows (docs/results-format.md, "Export"): one per (run, layer, q head) for replay
// results with each KV head's tables on its q heads and the trace's model layer ids; one per run
// for eval results; incomplete runs left out; other files refused by name.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "dgq/errors.hpp"
#include "dgq/sim/export/export.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_replay_support.hpp"
#include "test_results_helpers.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

// Two damage schemes replayed over the tiny trace (2 layers, 4 q heads, 2 KV heads), whose
// layers are the model's layers 7 and 29; the second damages no token (SNR inf).
std::vector<sim::RunResult> export_test_runs() {
  auto meta = test::tiny_meta(DType::f16, 40);
  meta.layer_ids = {7, 29};
  const test::DamageScheme a(10, 0.5f), b(1000, 0.25f);
  sim::Replayer replayer(meta, "traces/tiny.h5", {&a, &b}, {"a@tiny", "b,quoted@tiny"}, sim::ReplayOptions{});
  for (int l = 0; l < meta.num_layers; ++l) replayer.add_layer(test::tiny_layer(meta, l, DType::f32));
  return replayer.finish();
}

// The records of a CSV text, RFC 4180 (quoted fields may hold commas, quotes and newlines).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        records.back().back() += text[++i];
      else if (c == '"')
        quoted = false;
      else
        records.back().back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\n') {
      records.emplace_back(1);
    } else {
      records.back().back() += c;
    }
  }
  REQUIRE(records.back() == std::vector<std::string>{""});  // the text ends with a line end
  records.pop_back();
  return records;
}

std::string exported(const std::string& path, sim::ExportFormat format) {
  std::ostringstream out;
  sim::export_results(path, format, out);
  return out.str();
}

using Record = std::map<std::string, std::string>;
std::vector<Record> csv_records(const std::string& path) {
  const auto rows = parse_csv(exported(path, sim::ExportFormat::csv));
  std::vector<Record> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    REQUIRE(rows[r].size() == rows[0].size());
    Record rec;
    for (std::size_t c = 0; c < rows[0].size(); ++c) rec[rows[0][c]] = rows[r][c];
    out.push_back(rec);
  }
  return out;
}

double mean_of_probes(const std::vector<double>& v, std::size_t row, std::size_t probes) {
  double sum = 0;
  for (std::size_t t = 0; t < probes; ++t) sum += v[row * probes + t];
  return sum / static_cast<double>(probes);
}

}  // namespace

TEST_CASE("export of replay results: one row per run, layer and q head, in the documented column order", "[export]") {
  const std::string path = test::scratch_dir("export_replay") + "/r.h5";
  const auto runs = export_test_runs();
  sim::add_runs(path, runs, false);
  const auto header = parse_csv(exported(path, sim::ExportFormat::csv)).at(0);
  const std::vector<std::string> leading = {"run", "scheme", "scheme_family", "device", "trace", "trace_model"};
  CHECK(std::vector<std::string>(header.begin(), header.begin() + 6) == leading);
  auto at = [&](const std::string& name) { return std::find(header.begin(), header.end(), name) - header.begin(); };
  CHECK(at("config_hash") < at("layer"));
  CHECK(at("layer") + 1 == at("model_layer"));
  CHECK(at("model_layer") + 1 == at("q_head"));
  CHECK(at("q_head") + 1 == at("kv_head"));
  CHECK(at("kv_head") + 1 == at("k_mse"));
  CHECK(at("k_segments") < at("v_mse"));
  CHECK(at("v_segments") + 1 == at("attn_kl"));
  CHECK(at("attn_kl") + 1 == at("attn_tv"));
  CHECK(header.back() == "attn_out_cos");
  CHECK(at("complete") == static_cast<long>(header.size()));  // the flag is 1 on every exported run

  const auto records = csv_records(path);
  REQUIRE(records.size() == 2 * 2 * 4);  // runs x layers x q heads
  const std::size_t probes = runs[0].trace.q_pos.size();
  std::size_t i = 0;
  for (const sim::RunResult& r : runs) {  // runs in name order: "a@tiny" < "b,quoted@tiny"
    for (std::size_t l = 0; l < 2; ++l) {
      for (std::size_t h = 0; h < 4; ++h, ++i) {
        const Record& rec = records[i];
        CAPTURE(r.name, l, h);
        CHECK(rec.at("run") == r.name);
        CHECK(rec.at("scheme") == r.scheme);  // the spec's commas survive the quoting
        CHECK(rec.at("layer") == std::to_string(l));
        CHECK(rec.at("model_layer") == (l == 0 ? "7" : "29"));
        CHECK(rec.at("q_head") == std::to_string(h));
        CHECK(rec.at("kv_head") == std::to_string(h / 2));
        const std::size_t unit = l * 2 + h / 2;
        CHECK(std::stod(rec.at("k_mse")) == r.k.mse[unit]);
        CHECK(std::stod(rec.at("v_rel_fro")) == r.v.rel_fro[unit]);
        CHECK(rec.at("k_bytes") == std::to_string(r.k.bytes[unit]));
        CHECK(rec.at("v_segments") == std::to_string(r.v.segment_count[unit]));
        CHECK(std::stod(rec.at("attn_kl")) == mean_of_probes(r.attn.kl, l * 4 + h, probes));
        CHECK(rec.at("k_snr_db") == sim::export_number(r.k.snr_db[unit]));
        CHECK(rec.at("tokens") == "40");
      }
    }
  }
}

TEST_CASE("export of replay results as JSON Lines: the same rows, one object each, inf and NaN as null", "[export]") {
  const std::string path = test::scratch_dir("export_replay_jsonl") + "/r.h5";
  const auto runs = export_test_runs();
  sim::add_runs(path, runs, false);
  std::istringstream lines(exported(path, sim::ExportFormat::jsonl));
  const auto records = csv_records(path);
  std::string line;
  std::size_t i = 0, infinite = 0;
  for (; std::getline(lines, line); ++i) {
    const auto object = nlohmann::json::parse(line);
    REQUIRE(i < records.size());
    CHECK(object.size() == records[i].size());
    CHECK(object.at("run") == records[i].at("run"));
    CHECK(object.at("model_layer").get<std::int64_t>() == std::stoll(records[i].at("model_layer")));
    const double snr = std::stod(records[i].at("k_snr_db"));
    if (std::isfinite(snr))
      CHECK(object.at("k_snr_db").get<double>() == snr);
    else
      CHECK(object.at("k_snr_db").is_null());
    infinite += std::isinf(snr) ? 1 : 0;
  }
  CHECK(i == records.size());
  CHECK(infinite == 8);  // every row of the lossless run
}

TEST_CASE("export leaves out incomplete runs and refuses a file with none", "[export]") {
  const std::string dir = test::scratch_dir("export_incomplete");
  const std::string path = dir + "/r.h5";
  sim::add_runs(path, {export_test_runs()[0]}, false);
  test::plant_incomplete_run(path, "killed");
  const auto records = csv_records(path);
  CHECK(records.size() == 8);
  for (const Record& r : records) CHECK(r.at("run") == "a@tiny");

  const std::string empty = dir + "/empty.h5";
  sim::add_runs(empty, {export_test_runs()[0]}, false);
  test::plant_incomplete_run(empty, "z");
  test::set_run_attribute(empty, "a@tiny", "complete", nullptr);  // interrupted: no flag
  REQUIRE_THROWS_MATCHES(exported(empty, sim::ExportFormat::csv), InputError,
                         Catch::Matchers::Message(empty + ": no complete run to export (2 incomplete)"));
}

TEST_CASE("export of a run written before model_layers: the model layer is the trace layer", "[export]") {
  const std::string path = test::scratch_dir("export_old_run") + "/r.h5";
  sim::add_runs(path, {export_test_runs()[0]}, false);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(H5Ldelete(f, "/runs/a@tiny/model_layers", H5P_DEFAULT) >= 0);
  H5Fclose(f);
  for (const Record& r : csv_records(path)) CHECK(r.at("model_layer") == r.at("layer"));
}

namespace {

void write_attr(hid_t obj, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  REQUIRE(H5Awrite(a, type, &p) >= 0);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

template <class T>
void write_attr(hid_t obj, const char* name, T value, hid_t file_type, hid_t mem_type) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(a, mem_type, &value) >= 0);
  H5Aclose(a);
  H5Sclose(space);
}

// A dgq-eval file as docs/eval.md describes it: settings and provenance on the root, runs 0..n-1.
void write_eval_file(const std::string& path, int runs) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  write_attr(f, "format", "dgq-eval");
  write_attr(f, "version", std::int64_t{1}, H5T_STD_I64LE, H5T_NATIVE_INT64);
  write_attr(f, "model", "tiny, \"llama\"");
  write_attr(f, "ctx", std::int64_t{128}, H5T_STD_I64LE, H5T_NATIVE_INT64);
  write_attr(f, "config_hash", "00000000000000ff");
  const hid_t g = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (int i = 0; i < runs; ++i) {
    const hid_t r = H5Gcreate2(g, std::to_string(i).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    write_attr(r, "spec", i == 0 ? "fp16" : "q8_0");
    write_attr(r, "config_hash", std::to_string(1000 + i));
    write_attr(r, "ppl", 3.5 + i, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    write_attr(r, "bits_k", std::numeric_limits<double>::quiet_NaN(), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    H5Gclose(r);
  }
  H5Gclose(g);
  H5Fclose(f);
}

}  // namespace

TEST_CASE("export of eval results: one row per scheme run in run order, the root's settings first", "[export]") {
  const std::string path = test::scratch_dir("export_eval") + "/e.h5";
  write_eval_file(path, 11);
  const auto rows = parse_csv(exported(path, sim::ExportFormat::csv));
  CHECK(rows.at(0) ==
        std::vector<std::string>{"run", "model", "ctx", "file_config_hash", "spec", "bits_k", "ppl", "config_hash"});
  REQUIRE(rows.size() == 12);
  for (int i = 0; i < 11; ++i) {  // "10" after "9": numeric order
    CAPTURE(i);
    CHECK(rows[i + 1] == std::vector<std::string>{std::to_string(i), "tiny, \"llama\"", "128", "00000000000000ff",
                                                  i == 0 ? "fp16" : "q8_0", "nan", sim::export_number(3.5 + i),
                                                  std::to_string(1000 + i)});
  }
}

TEST_CASE("export refuses files that are not results, naming the file and its format", "[export]") {
  const std::string dir = test::scratch_dir("export_refusals");
  const std::string trace = dir + "/trace.h5";
  test::write_tiny_trace(trace, test::tiny_meta(DType::f16), DType::f16);
  REQUIRE_THROWS_AS(exported(trace, sim::ExportFormat::csv), InputError);
  REQUIRE_THROWS_WITH(exported(trace, sim::ExportFormat::csv),
                      Catch::Matchers::StartsWith(trace + ": attribute 'format' is 'dgq-trace', not a results file"));

  // A replay run and an eval-sweep run in one file have no common layout.
  const std::string mixed = dir + "/mixed.h5";
  sim::add_runs(mixed, export_test_runs(), false);
  test::set_run_attribute(mixed, "b,quoted@tiny", "kind", "eval");
  REQUIRE_THROWS_WITH(exported(mixed, sim::ExportFormat::csv),
                      Catch::Matchers::Contains("holds replay runs (a@tiny) and eval-sweep runs (b,quoted@tiny"));
}

TEST_CASE("export to a file goes through OUT.partial and refuses to overwrite the results", "[export]") {
  const std::string dir = test::scratch_dir("export_to_file");
  const std::string path = dir + "/r.h5";
  sim::add_runs(path, {export_test_runs()[0]}, false);
  const sim::ExportSummary written = sim::export_results_to_file(path, sim::ExportFormat::csv, dir + "/r.csv");
  CHECK(written.rows == 8);  // 2 layers x 4 q heads
  const auto bytes = test::file_bytes(dir + "/r.csv");
  const std::string text = exported(path, sim::ExportFormat::csv);
  CHECK(std::string(bytes.begin(), bytes.end()) == text);
  CHECK(written.columns == parse_csv(text).at(0).size());
  CHECK_FALSE(std::filesystem::exists(dir + "/r.csv.partial"));
  REQUIRE_THROWS_AS(sim::export_results_to_file(path, sim::ExportFormat::csv, path), ParameterError);
  // A file that is not results: nothing is left under either name.
  const std::string trace = dir + "/trace.h5";
  test::write_tiny_trace(trace, test::tiny_meta(DType::f16), DType::f16);
  REQUIRE_THROWS_AS(sim::export_results_to_file(trace, sim::ExportFormat::csv, dir + "/t.csv"), InputError);
  CHECK_FALSE(std::filesystem::exists(dir + "/t.csv"));
  CHECK_FALSE(std::filesystem::exists(dir + "/t.csv.partial"));
}

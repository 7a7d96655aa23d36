// Console and markdown output of the side-by-side run, with the targets of the side-by-side benchmark.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "dgq/scheme.hpp"
#include "side_by_side.hpp"

#include "report_common.hpp"

namespace dgq::ggml_bench {
namespace {

const Result* find(const std::vector<Result>& rs, const std::string& impl, const std::string& scheme,
                   const std::string& op, const std::string& dtype, int threads) {
  for (const auto& r : rs)
    if (r.impl == impl && r.scheme == scheme && r.op == op && r.dtype == dtype && r.threads == threads) return &r;
  return nullptr;
}

// Rate ratio a/b (same element count, so the inverse ratio of the times); 0 when b is absent.
double ratio(const Result* a, const Result* b) { return a && b ? b->seconds / a->seconds : 0; }

struct Row {
  std::vector<std::string> cells;
};

// One table per thread count: rates, fraction of memcpy's moved GB/s and the ggml ratios.
std::vector<Row> rate_rows(const std::vector<Result>& rs, int threads, int first_threads) {
  std::vector<Row> rows;
  const Result* mem = find(rs, "memcpy", "memcpy", "copy", "f16", threads);
  for (const auto& r : rs) {
    if (r.threads != threads) continue;
    const Result* same =
        r.impl == "dgq" && is_ggml_type(r.scheme) ? find(rs, "ggml", r.scheme, r.op, r.dtype, threads) : nullptr;
    const Result* q8 = r.op == "copy" ? nullptr : find(rs, "ggml", "q8_0", r.op, r.dtype, threads);
    const Result* one = threads != first_threads ? find(rs, r.impl, r.scheme, r.op, r.dtype, first_threads) : nullptr;
    const double moved = r.moved_bytes / r.seconds;
    rows.push_back({{r.impl, r.scheme, r.op, r.dtype, fmt(r.seconds * 1e3), fmt(r.elements / r.seconds / 1e9),
                     fmt(moved / 1e9), mem ? fmt(moved / (mem->moved_bytes / mem->seconds)) : "", fmt(ratio(&r, same)),
                     fmt(ratio(&r, q8)), fmt(ratio(&r, one))}});
  }
  return rows;
}

const std::vector<std::string> kRateHeader = {"impl",         "scheme",       "op",         "dtype",
                                              "ms",           "Gelem/s",      "GB/s moved", "of memcpy",
                                              "vs ggml same", "vs ggml q8_0", "vs 1st thr"};

struct Target {
  std::string what;
  double measured = 0, goal = 0;
  std::string note;
};

std::vector<Target> targets(const std::vector<Result>& rs, int t1, int t2, double input_mib) {
  std::vector<Target> out;
  for (const std::string& s : ggml_type_names())
    for (const char* op : {"compress", "decompress"})
      for (const char* dt : {"f32", "f16"})
        out.push_back({s + " " + op + " " + (std::string(op) == "compress" ? "from " : "to ") + dt + " vs ggml's same",
                       ratio(find(rs, "dgq", s, op, dt, t1), find(rs, "ggml", s, op, dt, t1)), 0.9, ""});
  out.push_back({"DGQ v1 compress, fresh output, from f16 vs ggml q8_0 from f16",
                 ratio(find(rs, "dgq", "dgq", "compress", "f16", t1), find(rs, "ggml", "q8_0", "compress", "f16", t1)),
                 0.9, ""});
  out.push_back({"DGQ v1 compress, reused output, from f16 vs ggml q8_0 from f16 (not a target)",
                 ratio(find(rs, "dgq", "dgq (reused out)", "compress", "f16", t1),
                       find(rs, "ggml", "q8_0", "compress", "f16", t1)),
                 0, ""});
  out.push_back(
      {"q8_0 compress_into a reused output, from f16, vs ggml's q8_0 from f16 (not a target: like for like)",
       ratio(find(rs, "dgq", "q8_0 (into)", "compress", "f16", t1), find(rs, "ggml", "q8_0", "compress", "f16", t1)), 0,
       ""});
  out.push_back(
      {"DGQ v1 compress_into a reused output, from f16, vs ggml q8_0 from f16 (not a target: like for like)",
       ratio(find(rs, "dgq", "dgq (into)", "compress", "f16", t1), find(rs, "ggml", "q8_0", "compress", "f16", t1)), 0,
       ""});
  out.push_back(
      {"DGQ v1 decompress to f16 vs ggml q8_0 dequantize (to_float, f32)",
       ratio(find(rs, "dgq", "dgq", "decompress", "f16", t1), find(rs, "ggml", "q8_0", "decompress", "f32", t1)), 1.0,
       ""});
  // Every other registered family (DGQ v1 has its own rows above).
  for (const std::string& s : scheme_families()) {
    if (is_ggml_type(s) || s == "dgq") continue;
    for (const char* op : {"compress", "decompress"})
      out.push_back({s + " " + op + " (f16) vs ggml q8_0 (f16)",
                     ratio(find(rs, "dgq", s, op, "f16", t1), find(rs, "ggml", "q8_0", op, "f16", t1)), 0.7, ""});
  }
  // DGQ v2 at its defaults (4-bit keys) compresses at least as fast as q4_0, ggml's
  // and dgq's own (both from the same fp16 input).
  const Result* dgq2 = find(rs, "dgq", "dgq2", "compress", "f16", t1);
  out.push_back({"dgq2 compress (f16) vs ggml q4_0 compress (f16)",
                 ratio(dgq2, find(rs, "ggml", "q4_0", "compress", "f16", t1)), 1.0, ""});
  out.push_back({"dgq2 compress (f16) vs dgq q4_0 compress (f16)",
                 ratio(dgq2, find(rs, "dgq", "q4_0", "compress", "f16", t1)), 1.0, ""});
  if (t2 > 0) {
    // Scaling: the slowest and the median dgq entry's 2-thread rate over its 1-thread rate (each
    // entry's own figure is the "vs 1st thr" column of the 2-thread table).
    std::vector<double> speedups;
    std::string slowest;
    for (const auto& r : rs) {
      if (r.impl != "dgq" || r.threads != t2) continue;
      speedups.push_back(ratio(&r, find(rs, "dgq", r.scheme, r.op, r.dtype, t1)));
      if (speedups.back() <= *std::min_element(speedups.begin(), speedups.end()))
        slowest = r.scheme + " " + r.op + " " + r.dtype;
    }
    if (!speedups.empty()) {
      std::vector<double> sorted = speedups;
      std::sort(sorted.begin(), sorted.end());
      const std::string what = std::to_string(t2) + " threads vs " + std::to_string(t1) + ", every dgq entry: ";
      const std::string note = input_mib >= 256 ? "" : "target is for >= 256 MiB; this run is smaller";
      out.push_back({what + "the slowest (" + slowest + ")", sorted.front(), input_mib >= 256 ? 1.7 : 0, note});
      out.push_back({what + "the median", sorted[sorted.size() / 2], input_mib >= 256 ? 1.7 : 0, note});
    }
  }
  return out;
}

void markdown_table(std::ostream& out, const std::vector<std::string>& header, const std::vector<Row>& rows) {
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << (i < 4 ? "---|" : "---:|");
  out << "\n";
  for (const auto& r : rows) {
    out << "|";
    for (const auto& c : r.cells) out << " " << c << " |";
    out << "\n";
  }
}

std::vector<int> thread_counts(const std::vector<Result>& rs) {
  std::vector<int> t;
  for (const auto& r : rs)
    if (t.empty() || t.back() != r.threads) t.push_back(r.threads);
  return t;
}

}  // namespace

void print_results(const std::vector<Result>& rs, std::ostream& out) {
  const auto ts = thread_counts(rs);
  for (int t : ts) {
    out << "\n" << t << " thread(s)\n";
    out << std::left << std::setw(8) << "impl" << std::setw(18) << "scheme" << std::setw(11) << "op" << std::setw(6)
        << "dtype" << std::right;
    for (std::size_t i = 4; i < kRateHeader.size(); ++i) out << std::setw(13) << kRateHeader[i];
    out << "\n";
    for (const auto& row : rate_rows(rs, t, ts.front())) {
      out << std::left << std::setw(8) << row.cells[0] << std::setw(18) << row.cells[1] << std::setw(11) << row.cells[2]
          << std::setw(6) << row.cells[3] << std::right;
      for (std::size_t i = 4; i < row.cells.size(); ++i) out << std::setw(13) << row.cells[i];
      out << "\n";
    }
  }
}

void write_markdown(const std::vector<Result>& rs, const Options& o, const std::string& load_before,
                    const std::string& path) {
  const auto ts = thread_counts(rs);
  const double input_mib = static_cast<double>(o.heads) * o.tokens * o.head_dim * 2 / (1 << 20);
  std::ofstream out(path + ".partial");
  if (!out) throw std::runtime_error("cannot write " + path + ".partial");
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  out << "<!-- written by bench/ggml/run.sh (dgq-ggml-bench); do not edit by hand -->\n"
      << "Date: " << date << ". Machine: " << machine() << ". Load average (1/5/15 min) before: " << load_before
      << ", after: " << load_average() << ".\n"
      << "Command: `" << (o.command.empty() ? "dgq-ggml-bench" : o.command) << "`"
      << (o.commit.empty() ? "" : ", commit " + o.commit) << ".\n"
      << "Layer: " << o.heads << " heads x " << o.tokens << " tokens x " << o.head_dim << " channels, fp16 ("
      << fmt(input_mib, 0) << " MiB; the fp32 copy is twice that); " << o.rounds
      << " interleaved rounds after a warm-up round, medians.\n\n";
  for (int t : ts) {
    out << "**" << t << " thread" << (t > 1 ? "s" : "") << "**\n\n";
    markdown_table(out, kRateHeader, rate_rows(rs, t, ts.front()));
    out << "\n";
  }
  out << "**Targets of the ggml side-by-side benchmark** (" << ts.front()
      << " thread unless stated)\n\n| target | measured | goal | met |\n|---|---:|---:|---|\n";
  for (const auto& t : targets(rs, ts.front(), ts.size() > 1 ? ts[1] : 0, input_mib)) {
    if (t.measured == 0) continue;  // a scheme left out by --only
    const std::string met = t.goal == 0 ? (t.note.empty() ? "-" : t.note) : (t.measured >= t.goal ? "met" : "missed");
    out << "| " << t.what << " | " << fmt(t.measured, 3) << "x | " << (t.goal == 0 ? "" : fmt(t.goal) + "x") << " | "
        << met << " |\n";
  }
  out.close();
  if (!out || std::rename((path + ".partial").c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot write " + path);
}

}  // namespace dgq::ggml_bench

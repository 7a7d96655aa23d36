// Console and markdown output of the decode side-by-side run: the decode table, the
// kernel's targets and the Llama-3.1-8B latency rows.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "decode_side_by_side.hpp"

#include "report_common.hpp"

namespace dgq::ggml_bench {
namespace {

constexpr int kLlamaLayers = 32;
const std::vector<std::int64_t> kLlamaLengths = {8192, 32768, 131072};
// The stored type a dgq entry reads: "q4_0+rot" (rot=hadamard on q4_0 blocks) reads q4_0's
// bytes, so its ggml and memcpy references are q4_0's.
std::string stored_type(const std::string& type) { return type.substr(0, type.find('+')); }

// The types of the run in run order, f16 (ggml's only) first: each dgq entry's type. The ggml
// cache a type is compared with as "the same" is its result's peer: its own, or for a type ggml
// lacks the nearest in bits (DGQ v1: q8_0; dgq2 and KIVI: q4_0), shown in parentheses.
std::vector<std::string> types_of(const std::vector<DecodeResult>& rs) {
  std::vector<std::string> out{"f16"};
  for (const auto& r : rs)
    if (r.impl == "dgq" && std::find(out.begin(), out.end(), r.type) == out.end()) out.push_back(r.type);
  return out;
}
std::string ggml_peer(const std::vector<DecodeResult>& rs, const std::string& type) {
  for (const auto& r : rs)
    if (r.type == type && !r.peer.empty()) return r.peer;
  return stored_type(type);
}
bool ggml_has(const std::vector<DecodeResult>& rs, const std::string& type) {
  return ggml_peer(rs, type) == stored_type(type);
}
std::string display_name(const std::string& type) {
  return type == "dgq" ? "DGQ v1" : type == "dgq-segch" ? "DGQ v1 segment-channel" : type;
}

const DecodeResult* find(const std::vector<DecodeResult>& rs, const std::string& impl, const std::string& type,
                         int head_dim, std::int64_t tokens, int threads) {
  for (const auto& r : rs)
    if (r.impl == impl && r.type == type && r.head_dim == head_dim && r.tokens == tokens && r.threads == threads)
      return &r;
  return nullptr;
}

// How many times faster a is than b (b's time over a's); 0 when either is absent.
double speedup(const DecodeResult* a, const DecodeResult* b) { return a && b ? b->seconds / a->seconds : 0; }

std::string length_name(std::int64_t tokens) {
  return tokens % 1024 == 0 ? std::to_string(tokens / 1024) + "K" : std::to_string(tokens);
}

using Rows = std::vector<std::vector<std::string>>;

// The configurations present, in run order.
template <class Key>
std::vector<Key> distinct(const std::vector<DecodeResult>& rs, Key (*key)(const DecodeResult&)) {
  std::vector<Key> out;
  for (const auto& r : rs)
    if (std::find(out.begin(), out.end(), key(r)) == out.end()) out.push_back(key(r));
  return out;
}
int head_dim_of(const DecodeResult& r) { return r.head_dim; }
std::int64_t tokens_of(const DecodeResult& r) { return r.tokens; }
int threads_of(const DecodeResult& r) { return r.threads; }

const std::vector<std::string> kDecodeHeader = {
    "L",      "threads",     "type",          "bits/value",       "memcpy ms",       "ggml ms",
    "dgq ms", "dgq steps/s", "dgq GB/s read", "dgq vs ggml same", "dgq vs ggml f16", "dgq vs memcpy"};

Rows decode_rows(const std::vector<DecodeResult>& rs, int head_dim) {
  Rows rows;
  auto lengths = distinct(rs, tokens_of);
  std::sort(lengths.begin(), lengths.end());
  for (std::int64_t tokens : lengths) {
    for (int threads : distinct(rs, threads_of)) {
      const DecodeResult* f16 = find(rs, "ggml", "f16", head_dim, tokens, threads);
      if (f16 == nullptr) continue;
      for (const std::string& type : types_of(rs)) {
        const DecodeResult* mem = find(rs, "memcpy", stored_type(type), head_dim, tokens, threads);
        const DecodeResult* peer = find(rs, "ggml", ggml_peer(rs, type), head_dim, tokens, threads);
        const DecodeResult* d = find(rs, "dgq", type, head_dim, tokens, threads);
        const bool own = ggml_has(rs, type);  // false for DGQ v1, dgq2, KIVI: ggml has no such type
        if (d == nullptr && (type != stored_type(type) || !own)) continue;
        const DecodeResult* g = own ? peer : nullptr;
        const DecodeResult* any = d ? d : mem;
        rows.push_back({length_name(tokens), std::to_string(threads), type, any ? fmt(any->bits, 2) : "",
                        mem ? fmt(mem->seconds * 1e3, 3) : "", g ? fmt(g->seconds * 1e3, 3) : "",
                        d ? fmt(d->seconds * 1e3, 3) : "", d ? fmt(1.0 / d->seconds, 1) : "",
                        d ? fmt(d->cache_bytes / d->seconds / 1e9) : "",
                        own ? fmt(speedup(d, peer)) : fmt(speedup(d, peer)) + " (" + ggml_peer(rs, type) + ")",
                        fmt(speedup(d, f16)), fmt(speedup(d, mem))});
      }
    }
  }
  return rows;
}

// "1.23x", or "(1.23x)" for a ratio shown where it is no goal (appended, not concatenated from a
// literal: GCC 12's -Wrestrict misfires on `"(" + std::string&&`).
std::string shown_ratio(double v, bool goal) {
  std::string s = goal ? "" : "(";
  s += fmt(v);
  s += goal ? "x" : "x)";
  return s;
}

struct TargetRow {
  std::vector<std::string> cells;
  int met = 0, goals = 0;
};

// The decode kernel's targets (docs/benchmarks.md): every dgq type >= 1.0x ggml's same type; at L >= 16K every type of
// at most 4.5 bits faster than ggml's f16 cache and within 3x of memcpy of its own bytes.
std::vector<TargetRow> target_rows(const std::vector<DecodeResult>& rs) {
  std::vector<TargetRow> out;
  for (const auto& d : rs) {
    if (d.impl != "dgq") continue;
    const double same = speedup(&d, find(rs, "ggml", ggml_peer(rs, d.type), d.head_dim, d.tokens, d.threads));
    const double f16 = speedup(&d, find(rs, "ggml", "f16", d.head_dim, d.tokens, d.threads));
    const DecodeResult* mem = find(rs, "memcpy", stored_type(d.type), d.head_dim, d.tokens, d.threads);
    const double of_memcpy = mem ? d.seconds / mem->seconds : 0;
    TargetRow row;
    std::string verdict;
    const auto goal = [&](bool ok, const std::string& what) {
      ++row.goals;
      row.met += ok ? 1 : 0;
      if (!ok) verdict += (verdict.empty() ? "missed: " : ", ") + what;
    };
    goal(same >= 1.0, "vs ggml same");
    const bool low_bit = d.tokens >= 16384 && d.bits <= 4.5 + 1e-9;
    if (low_bit) {
      goal(f16 > 1.0, "vs ggml f16");
      goal(of_memcpy > 0 && of_memcpy <= 3.0, "memcpy");
    }
    const std::string same_cell = ggml_has(rs, d.type) ? fmt(same) + "x" : fmt(same) + "x (" + d.peer + ")";
    row.cells = {std::to_string(d.head_dim),
                 length_name(d.tokens),
                 std::to_string(d.threads),
                 d.type,
                 fmt(d.bits, 2),
                 same_cell,
                 shown_ratio(f16, low_bit),
                 shown_ratio(of_memcpy, low_bit),
                 verdict.empty() ? "met" : verdict};
    out.push_back(row);
  }
  return out;
}

const std::vector<std::string> kTargetHeader = {"D",
                                                "L",
                                                "threads",
                                                "type",
                                                "bits/value",
                                                "vs ggml same or (peer) (goal >= 1)",
                                                "vs ggml f16 (goal > 1 at L >= 16K, <= 4.5 bits)",
                                                "time / memcpy of its bytes (goal <= 3)",
                                                "met"};

// Per type, over every row of the run: the range of each ratio (and the stored bits), the f16
// and memcpy ratios over L >= 16K (where they are goals for <= 4.5-bit types), and the goals met.
const std::vector<std::string> kSummaryHeader = {
    "type",     "bits/value", "vs ggml same or (peer)", "vs ggml f16 at L >= 16K", "time / memcpy at L >= 16K",
    "goals met"};

std::string span_of(double lo, double hi, int digits = 2) {
  const std::string a = fmt(lo, digits), b = fmt(hi, digits);
  return a == b ? a : a + " - " + b;
}

Rows summary_rows(const std::vector<DecodeResult>& rs, const std::vector<TargetRow>& targets) {
  Rows rows;
  for (const std::string& type : types_of(rs)) {
    double bits_lo = 1e9, bits_hi = 0, same_lo = 1e9, same_hi = 0, f16_lo = 1e9, f16_hi = 0, mem_lo = 1e9, mem_hi = 0;
    int met = 0, goals = 0;
    std::size_t i = 0;
    for (const auto& d : rs) {
      if (d.impl != "dgq") continue;
      const TargetRow& t = targets[i++];  // target_rows walks the dgq results in this order
      if (d.type != type) continue;
      met += t.met;
      goals += t.goals;
      bits_lo = std::min(bits_lo, d.bits), bits_hi = std::max(bits_hi, d.bits);
      const double same = speedup(&d, find(rs, "ggml", ggml_peer(rs, d.type), d.head_dim, d.tokens, d.threads));
      same_lo = std::min(same_lo, same), same_hi = std::max(same_hi, same);
      if (d.tokens < 16384) continue;
      const double f16 = speedup(&d, find(rs, "ggml", "f16", d.head_dim, d.tokens, d.threads));
      const DecodeResult* mem = find(rs, "memcpy", stored_type(d.type), d.head_dim, d.tokens, d.threads);
      const double of_memcpy = mem ? d.seconds / mem->seconds : 0;
      f16_lo = std::min(f16_lo, f16), f16_hi = std::max(f16_hi, f16);
      mem_lo = std::min(mem_lo, of_memcpy), mem_hi = std::max(mem_hi, of_memcpy);
    }
    if (goals == 0) continue;
    const std::string peer = ggml_has(rs, type) ? "" : " (" + ggml_peer(rs, type) + ")";
    rows.push_back({type, span_of(bits_lo, bits_hi), span_of(same_lo, same_hi) + "x" + peer,
                    f16_hi > 0 ? span_of(f16_lo, f16_hi) + "x" : "", mem_hi > 0 ? span_of(mem_lo, mem_hi) + "x" : "",
                    std::to_string(met) + " of " + std::to_string(goals)});
  }
  return rows;
}

// One layer timed, times 32 layers: the attention part of a Llama-3.1-8B decode step.
const std::vector<std::string> kLlamaHeader = {
    "L", "threads", "cache", "ms per layer", "ms per token (x32 layers)", "vs ggml f16 cache"};

Rows llama_rows(const std::vector<DecodeResult>& rs) {
  Rows rows;
  for (std::int64_t tokens : kLlamaLengths)
    for (int threads : distinct(rs, threads_of)) {
      const DecodeResult* f16 = find(rs, "ggml", "f16", 128, tokens, threads);
      if (f16 == nullptr) continue;
      for (const char* impl : {"ggml", "dgq"})
        for (const std::string& type : types_of(rs)) {
          const DecodeResult* r = find(rs, impl, type, 128, tokens, threads);
          if (r == nullptr) continue;
          const double change = (r->seconds / f16->seconds - 1) * 100;
          std::ostringstream pct;
          pct << std::showpos << std::fixed << std::setprecision(0) << change << " %";
          rows.push_back({length_name(tokens), std::to_string(threads), std::string(impl) + " " + display_name(type),
                          fmt(r->seconds * 1e3, 2), fmt(r->seconds * 1e3 * kLlamaLayers, 1), pct.str()});
        }
    }
  return rows;
}

void markdown_table(std::ostream& out, const std::vector<std::string>& header, const Rows& rows, int text_columns) {
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << (static_cast<int>(i) < text_columns ? "---|" : "---:|");
  out << "\n";
  for (const auto& r : rows) {
    out << "|";
    for (const auto& c : r) out << " " << c << " |";
    out << "\n";
  }
}

void text_table(std::ostream& out, const std::vector<std::string>& header, const Rows& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << std::setw(static_cast<int>(width[i]) + 2) << cells[i];
    out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

Rows cells_of(const std::vector<TargetRow>& rows) {
  Rows out;
  for (const auto& r : rows) out.push_back(r.cells);
  return out;
}

std::string targets_summary(const std::vector<TargetRow>& rows) {
  int met = 0, goals = 0;
  for (const auto& r : rows) {
    met += r.met;
    goals += r.goals;
  }
  return std::to_string(met) + " of " + std::to_string(goals) + " goals met";
}

}  // namespace

void print_decode_results(const std::vector<DecodeResult>& rs, const DecodeOptions&, std::ostream& out) {
  for (int head_dim : distinct(rs, head_dim_of)) {
    out << "\ndecode step, head_dim " << head_dim << "\n";
    text_table(out, kDecodeHeader, decode_rows(rs, head_dim));
  }
  const auto targets = target_rows(rs);
  out << "\ntargets (" << targets_summary(targets) << ")\n";
  text_table(out, kTargetHeader, cells_of(targets));
  out << "\nby type\n";
  text_table(out, kSummaryHeader, summary_rows(rs, targets));
  out << "\nLlama-3.1-8B attention per decode step (one layer timed, x" << kLlamaLayers << " layers)\n";
  text_table(out, kLlamaHeader, llama_rows(rs));
}

void write_decode_markdown(const std::vector<DecodeResult>& rs, const DecodeOptions& o, const std::string& load_before,
                           const std::string& path) {
  std::ofstream out(path + ".partial");
  if (!out) throw std::runtime_error("cannot write " + path + ".partial");
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  out << "<!-- written by bench/ggml/run.sh --decode (dgq-ggml-bench); do not edit by hand -->\n"
      << "Date: " << date << ". Machine: " << machine() << ". Load average (1/5/15 min) before: " << load_before
      << ", after: " << load_average() << ".\n"
      << "Command: `" << (o.command.empty() ? "dgq-ggml-bench --decode" : o.command) << "`";
  if (!o.commit.empty()) out << ", commit " << o.commit;
  out << ".\n"
      << "Layer: " << o.kv_heads << " KV heads, GQA " << o.group << " (" << o.kv_heads * o.group
      << " query heads), one query token; K and V of L tokens; " << o.rounds
      << " interleaved rounds after a warm-up round, medians. \"vs\" columns: how many times faster dgq's step is "
         "(the other's time over dgq's); \"dgq vs memcpy\": memcpy's time for the same K+V bytes over dgq's.\n\n";
  for (int head_dim : distinct(rs, head_dim_of)) {
    out << "**Decode step, head_dim " << head_dim << "**\n\n";
    markdown_table(out, kDecodeHeader, decode_rows(rs, head_dim), 3);
    out << "\n";
  }
  const auto targets = target_rows(rs);
  out << "**Targets of the decode side-by-side** (" << targets_summary(targets)
      << "; a ratio in parentheses is shown, not a goal)\n\n";
  markdown_table(out, kTargetHeader, cells_of(targets), 4);
  out << "\n**By type** (ranges over every row above; the f16 and memcpy columns over L >= 16K)\n\n";
  markdown_table(out, kSummaryHeader, summary_rows(rs, targets), 1);
  // The Llama rows only where lengths for them were asked (--llama-lengths ""): no empty table.
  if (const auto llama = llama_rows(rs); !llama.empty()) {
    out << "\n**Llama-3.1-8B shape** (8 KV heads x 128, GQA 4): attention of one decode step, one layer timed and "
           "multiplied by "
        << kLlamaLayers << " layers (not timed as 32 layers)\n\n";
    markdown_table(out, kLlamaHeader, llama, 3);
  }
  out.close();
  if (!out || std::rename((path + ".partial").c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot write " + path);
}

}  // namespace dgq::ggml_bench

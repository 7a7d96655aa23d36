// The human-readable table `dgq replay` prints: one row per run.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "dgq/kv_pair.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/files/results/run_result.hpp"
#include "dgq/sim/files/results/run_summary.hpp"

namespace dgq::sim {

namespace {

std::string cell(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

double mean_of(const RunSummary& s, const char* metric) {
  const MetricSummary* m = s.find(metric);
  return m ? m->overall.mean : 0.0;
}

double p95_of(const RunSummary& s, const char* metric) {
  const MetricSummary* m = s.find(metric);
  return m ? m->overall.p95 : 0.0;
}

// "family[:non-default parameters]": the canonical spec without the parameters that equal the
// family's defaults, so that rows stay readable (the results file keeps the full spec).
std::string short_spec(const std::string& spec) {
  if (const auto pair = split_kv_pair_spec(spec)) return join_kv_pair_spec(short_spec(pair->k), short_spec(pair->v));
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  const std::string family = spec.substr(0, colon);
  const std::string defaults = make_scheme(family)->spec();
  // Comma-delimited on both sides so that a parameter matches only whole ("k=v,").
  std::string default_params(1, ',');
  default_params.append(defaults, defaults.find(':') + 1);
  default_params.push_back(',');
  std::string kept;
  std::size_t start = colon + 1;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string param = spec.substr(start, end - start);
    std::string delimited(1, ',');
    delimited.append(param);
    delimited.push_back(',');
    if (default_params.find(delimited) == std::string::npos) {
      if (!kept.empty()) kept.push_back(',');
      kept.append(param);
    }
    start = end + 1;
  }
  if (kept.empty()) return family;
  std::string label = family;
  label.push_back(':');
  label.append(kept);
  return label;
}

// Runs with their default name are shown by short spec and trace; named runs by their name.
std::string row_label(const RunResult& r) {
  if (r.name != default_run_name(r.scheme, r.trace_path)) return r.name;
  return short_spec(r.scheme) + " @ " + std::filesystem::path(r.trace_path).stem().string();
}

}  // namespace

std::string format_run_table(const std::vector<RunResult>& runs) {
  std::size_t width = 3;
  for (const auto& r : runs) width = std::max(width, row_label(r).size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %9s %7s %9s %9s %10s %10s %10s %10s %7s %8s\n", static_cast<int>(width), "run",
                "bits/elem", "ratio", "K SNR dB", "V SNR dB", "KL mean", "KL p95", "out mean", "out p95", "top-8",
                "seg/head");
  out += line;
  for (const auto& r : runs) {
    const RunSummary s = summarize_run(r);
    std::snprintf(line, sizeof line, "%-*s %9s %7s %9s %9s %10s %10s %10s %10s %7s %8s\n", static_cast<int>(width),
                  row_label(r).c_str(), cell(s.bits_per_element, "%.3f").c_str(), cell(s.ratio, "%.3f").c_str(),
                  cell(mean_of(s, "k_snr_db"), "%.2f").c_str(), cell(mean_of(s, "v_snr_db"), "%.2f").c_str(),
                  cell(mean_of(s, "attn_kl"), "%.3e").c_str(), cell(p95_of(s, "attn_kl"), "%.3e").c_str(),
                  cell(mean_of(s, "attn_out_rel_l2"), "%.3e").c_str(),
                  cell(p95_of(s, "attn_out_rel_l2"), "%.3e").c_str(), cell(mean_of(s, "attn_top8"), "%.4f").c_str(),
                  cell(s.mean_segments, "%.2f").c_str());
    out += line;
  }
  return out;
}

}  // namespace dgq::sim

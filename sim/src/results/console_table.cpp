// The human-readable table `dgq replay` prints: one row per run.
#include <algorithm>
#include <cstdio>
#include <string>

#include "dgq/sim/results.hpp"

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

}  // namespace

std::string format_run_table(const std::vector<RunResult>& runs) {
  std::size_t width = 3;
  for (const auto& r : runs) width = std::max(width, r.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %9s %7s %9s %9s %10s %10s %10s %10s %7s %8s\n", static_cast<int>(width),
                "run", "bits/elem", "ratio", "K SNR dB", "V SNR dB", "KL mean", "KL p95", "out mean", "out p95",
                "top-8", "seg/head");
  out += line;
  for (const auto& r : runs) {
    const RunSummary s = summarize_run(r);
    std::snprintf(line, sizeof line, "%-*s %9s %7s %9s %9s %10s %10s %10s %10s %7s %8s\n", static_cast<int>(width),
                  r.name.c_str(), cell(s.bits_per_element, "%.3f").c_str(), cell(s.ratio, "%.3f").c_str(),
                  cell(mean_of(s, "k_snr_db"), "%.2f").c_str(), cell(mean_of(s, "v_snr_db"), "%.2f").c_str(),
                  cell(mean_of(s, "attn_kl"), "%.3e").c_str(), cell(p95_of(s, "attn_kl"), "%.3e").c_str(),
                  cell(mean_of(s, "attn_out_rel_l2"), "%.3e").c_str(), cell(p95_of(s, "attn_out_rel_l2"), "%.3e").c_str(),
                  cell(mean_of(s, "attn_top8"), "%.4f").c_str(), cell(s.mean_segments, "%.2f").c_str());
    out += line;
  }
  return out;
}

}  // namespace dgq::sim

#pragma once
// What a replay run amounts to (docs/results-format.md, "summary"): every metric aggregated over
// the run and per layer, the bits and ratio; written as the JSON summary and the console table.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/files/results/run_result.hpp"
#include "dgq/sim/metrics/summary.hpp"

namespace dgq::sim {

// One aggregated metric of a run: over everything, and per replayed layer.
struct MetricSummary {
  std::string name;  // e.g. "k_snr_db", "attn_kl", "clean_kl", "noise_mass_hat"
  Summary overall;
  std::vector<Summary> per_layer;
};

struct RunSummary {
  std::uint64_t k_bytes = 0, v_bytes = 0, original_bytes = 0;  // over all replayed units
  double bits_per_element = 0;                                 // 8 * (K + V bytes) / (K + V elements)
  double ratio = 0;                                            // original bytes / compressed bytes
  double mean_segments = 0;  // segments per head, mean over K and V units (0: no segmentation)
  std::vector<MetricSummary> metrics;
  const MetricSummary* find(const std::string& name) const;
};

RunSummary summarize_run(const RunResult& run);

// JSON summary of runs (docs/results-format.md, "JSON summary"), written through PATH.partial.
// Non-finite numbers are written as the strings "Infinity", "-Infinity", "NaN".
void write_json_summary(const std::string& path, const std::vector<RunResult>& runs);

// The console table: one row per run (bits/elem, ratio, K/V SNR, KL mean/p95, output error
// mean/p95, top-8 recall, segments per head).
std::string format_run_table(const std::vector<RunResult>& runs);

}  // namespace dgq::sim

// Aggregates of a run: every metric over all values and per replayed layer, in a fixed
// order (docs/results-format.md, "summary").
#include <cmath>
#include <span>

#include "dgq/sim/files/results/run_summary.hpp"
#include "dgq/sim/metrics/probe_metrics.hpp"

namespace dgq::sim {

namespace {

// values holds `layers` consecutive blocks of equal size, one per replayed layer.
MetricSummary summarize_blocks(std::string name, const std::vector<double>& values, std::size_t layers) {
  MetricSummary m;
  m.name = std::move(name);
  m.overall = summarize(values);
  const std::size_t block = layers ? values.size() / layers : 0;
  for (std::size_t l = 0; l < layers; ++l) {
    m.per_layer.push_back(summarize(std::span<const double>(values).subspan(l * block, block)));
  }
  return m;
}

std::vector<double> as_double(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }

void add_tensor_metrics(RunSummary& s, const std::string& prefix, const TensorTable& t, std::size_t layers) {
  s.metrics.push_back(summarize_blocks(prefix + "_mse", t.mse, layers));
  s.metrics.push_back(summarize_blocks(prefix + "_snr_db", t.snr_db, layers));
  s.metrics.push_back(summarize_blocks(prefix + "_max_abs_err", t.max_abs_err, layers));
  s.metrics.push_back(summarize_blocks(prefix + "_rel_fro", t.rel_fro, layers));
  s.metrics.push_back(summarize_blocks(prefix + "_segments", as_double(t.segment_count), layers));
}

void add_attention_metrics(RunSummary& s, const std::string& prefix, const AttentionTable& a, std::size_t layers) {
  for (const ProbeMetricInfo& info : kProbeMetrics) {
    s.metrics.push_back(summarize_blocks(prefix + "_" + std::string(info.name), a.*info.column, layers));
  }
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t total = 0;
  for (auto x : v) total += x;
  return total;
}

}  // namespace

const MetricSummary* RunSummary::find(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

RunSummary summarize_run(const RunResult& run) {
  RunSummary s;
  const std::size_t layers = run.layers.size();
  s.k_bytes = sum(run.k.bytes);
  s.v_bytes = sum(run.v.bytes);
  s.original_bytes = sum(run.k.original_bytes) + sum(run.v.original_bytes);
  const double elements = 2.0 * static_cast<double>(layers) * run.trace.num_kv_heads *
                          static_cast<double>(run.trace.tokens) * run.trace.head_dim;
  const double stored = static_cast<double>(s.k_bytes + s.v_bytes);
  s.bits_per_element = elements > 0 ? 8.0 * stored / elements : 0.0;
  s.ratio = stored > 0 ? static_cast<double>(s.original_bytes) / stored : 0.0;
  double segments = 0;
  for (auto c : run.k.segment_count) segments += c;
  for (auto c : run.v.segment_count) segments += c;
  const std::size_t units = run.k.segment_count.size() + run.v.segment_count.size();
  s.mean_segments = units ? segments / static_cast<double>(units) : 0.0;
  add_tensor_metrics(s, "k", run.k, layers);
  add_tensor_metrics(s, "v", run.v, layers);
  add_attention_metrics(s, "attn", run.attn, layers);
  if (run.has_noise) {
    add_attention_metrics(s, "clean", run.attn_clean, layers);
    s.metrics.push_back(summarize_blocks("noise_mass", run.noise_mass, layers));
    s.metrics.push_back(summarize_blocks("noise_mass_hat", run.noise_mass_hat, layers));
  }
  return s;
}

}  // namespace dgq::sim

// The --json summary, built as a toml++ table and printed with toml++'s JSON formatter.
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "dgq/errors.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "dgq/sim/files/provenance/build_info.hpp"
#include "dgq/sim/files/results/run_summary.hpp"

namespace dgq::sim {

namespace {

toml::table summary_stats(const Summary& s) {
  return toml::table{{"mean", s.mean}, {"p50", s.p50}, {"p95", s.p95}, {"max", s.max}, {"count", s.count}};
}

toml::table run_table(const RunResult& r) {
  const RunSummary s = summarize_run(r);
  toml::table metrics;
  for (const MetricSummary& m : s.metrics) metrics.insert(m.name, summary_stats(m.overall));
  toml::array layers;
  for (int l : r.layers) layers.push_back(l);
  return toml::table{
      {"name", r.name},
      {"dgq_version", build_info().version_string()},
      {"config_hash", r.config_hash},
      {"scheme", r.scheme},
      {"scheme_family", r.scheme_family},
      {"device", r.device},
      {"trace", r.trace_path},
      {"trace_model", r.trace.model},
      {"trace_prompt_kind", r.trace.prompt_kind},
      {"tokens", r.trace.tokens},
      {"layers", std::move(layers)},
      {"num_kv_heads", r.trace.num_kv_heads},
      {"num_q_heads", r.trace.num_q_heads},
      {"probes", static_cast<std::int64_t>(r.trace.q_pos.size())},
      {"k_bytes", static_cast<std::int64_t>(s.k_bytes)},
      {"v_bytes", static_cast<std::int64_t>(s.v_bytes)},
      {"original_bytes", static_cast<std::int64_t>(s.original_bytes)},
      {"bits_per_element", s.bits_per_element},
      {"ratio", s.ratio},
      {"mean_segments", s.mean_segments},
      {"metrics", std::move(metrics)},
  };
}

}  // namespace

void write_json_summary(const std::string& path, const std::vector<RunResult>& runs) {
  toml::array list;
  for (const RunResult& r : runs) list.push_back(run_table(r));
  const toml::table root{{"format", "dgq-results-summary"}, {"version", 1}, {"runs", std::move(list)}};
  std::ostringstream text;
  text << toml::json_formatter{root} << "\n";
  write_text_file(path, text.str());
}

}  // namespace dgq::sim

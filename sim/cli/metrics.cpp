// `dgq metrics`: the per-probe attention metrics of the replay, from their one table
// (dgq/sim/metrics/probe_metrics.hpp): name, unit, better direction and description. --json prints the
// same for programs (notebooks/dgqresults.py reads it).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <toml++/toml.h>

#include "commands.hpp"
#include "dgq/sim/metrics/probe_metrics.hpp"

namespace dgq::cli {

void register_metrics(CLI::App& app) {
  auto* cmd = app.add_subcommand("metrics", "List the attention metrics of the replay (from the metric table)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print them as JSON (format dgq-metrics)");
  cmd->callback([json] {
    if (*json) {
      toml::array rows;
      for (const sim::ProbeMetricInfo& m : sim::kProbeMetrics)
        rows.push_back(
            toml::table{{"name", std::string(m.name)},
                        {"unit", std::string(m.unit)},
                        {"better", std::string(sim::better_name(m.better))},
                        {"aggregation", "probe_mean_and_summary"},
                        {"summaries", toml::array{"attn_" + std::string(m.name), "clean_" + std::string(m.name)}},
                        {"description", std::string(m.description)}});
      std::cout << toml::json_formatter{toml::table{{"format", "dgq-metrics"}, {"metrics", rows}}} << "\n";
      return;
    }
    std::printf("%-12s %-12s %-7s %s\n", "metric", "unit", "better",
                "description (summaries attn_<metric>, clean_<metric>)");
    for (const sim::ProbeMetricInfo& m : sim::kProbeMetrics)
      std::printf("%-12.*s %-12.*s %-7.*s %.*s\n", static_cast<int>(m.name.size()), m.name.data(),
                  static_cast<int>(m.unit.size()), m.unit.data(), static_cast<int>(sim::better_name(m.better).size()),
                  sim::better_name(m.better).data(), static_cast<int>(m.description.size()), m.description.data());
  });
}

}  // namespace dgq::cli

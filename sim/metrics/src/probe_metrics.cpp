#include "dgq/sim/metrics/probe_metrics.hpp"

namespace dgq::sim {

void AttentionTable::resize(std::size_t n) {
  for (const ProbeMetricInfo& info : kProbeMetrics) (this->*info.column).assign(n, 0.0);
}

std::string_view better_name(Better b) { return b == Better::lower ? "lower" : "higher"; }

}  // namespace dgq::sim

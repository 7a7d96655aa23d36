// libFuzzer target: the sweep config parser (docs/replay.md, "Sweeps") and the expansion of
// its grid into runs, on TOML text in memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/sweep/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  try {
    const dgq::sim::SweepConfig config =
        dgq::sim::parse_sweep_config_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.toml");
    (void)dgq::sim::expand_runs(config);
  } catch (const dgq::Error&) {}
  return 0;
}

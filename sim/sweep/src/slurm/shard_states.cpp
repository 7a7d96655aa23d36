// Which shards of a Slurm submission are complete: the runs each shard should hold (the
// sweep's run list, select_shard) against the complete runs in its results file.
#include <filesystem>

#include "dgq/errors.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/slurm.hpp"

namespace dgq::sim {

std::vector<SlurmShardState> slurm_shard_states(const SweepConfig& config, const SlurmOptions& o) {
  const std::vector<SweepRun> runs = expand_runs(config);
  if (o.tasks == 0 || o.tasks > runs.size()) {
    throw ParameterError(config.config_path + ": --tasks " + std::to_string(o.tasks) + " for a sweep of " +
                         std::to_string(runs.size()) + " run(s); need 1 <= tasks <= runs (a task needs work)");
  }
  std::vector<SlurmShardState> states;
  for (std::size_t i = 0; i < o.tasks; ++i) {
    SlurmShardState s;
    s.index = i;
    s.path = slurm_shard_path(o, i);
    s.file_exists = std::filesystem::exists(s.path);
    const RunListing listing = list_runs(s.path);
    for (const SweepRun& r : select_shard(runs, {i, o.tasks})) {
      ++s.expected;
      if (!listing.is_complete(r.name)) s.missing.push_back(r.name);
    }
    states.push_back(std::move(s));
  }
  return states;
}

std::string describe_shard(const SlurmShardState& s, std::size_t tasks) {
  std::string line = "shard " + std::to_string(s.index) + "/" + std::to_string(tasks) + ": ";
  if (s.complete()) {
    return line + "complete, " + std::to_string(s.expected) + " run(s), " + s.path;
  }
  line += "INCOMPLETE, " + std::to_string(s.missing.size()) + " of " + std::to_string(s.expected) + " run(s) missing (";
  constexpr std::size_t kNamed = 3;
  for (std::size_t i = 0; i < s.missing.size() && i < kNamed; ++i) line += (i ? ", " : "") + s.missing[i];
  if (s.missing.size() > kNamed) line += ", ...";
  line += "), " + s.path + (s.file_exists ? "" : " (no file)");
  return line;
}

std::size_t expected_runs(const std::vector<SlurmShardState>& shards) {
  std::size_t n = 0;
  for (const auto& s : shards) n += s.expected;
  return n;
}

std::size_t missing_runs(const std::vector<SlurmShardState>& shards) {
  std::size_t n = 0;
  for (const auto& s : shards) n += s.missing.size();
  return n;
}

}  // namespace dgq::sim

// Checks before a submission: inputs every task needs, and jobs of the same submission that
// are still queued or running (a second array on the same shard files would race the first).
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm.hpp"

namespace dgq::sim {

void check_slurm_inputs(const SweepConfig& config) {
  for (const SweepTrace& t : config.traces) {
    if (!t.synthetic && !std::filesystem::exists(t.path)) {
      throw ParameterError(config.config_path + ": trace '" + t.label + "': " + t.path +
                           ": no such file (every task would fail on it)");
    }
  }
}

std::vector<std::string> jobs_running_scripts(const std::string& squeue_output,
                                              const std::vector<std::string>& scripts) {
  std::vector<std::string> ids;
  std::istringstream lines(squeue_output);
  std::string line;
  while (std::getline(lines, line)) {
    const auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    const std::string command = line.substr(bar + 1);
    for (const std::string& s : scripts) {
      if (command == s) ids.push_back(line.substr(0, bar));
    }
  }
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;  // numeric order of decimal ids
  });
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());  // an array's tasks share its id
  return ids;
}

}  // namespace dgq::sim

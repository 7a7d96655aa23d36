#include "dgq/sim/files/output/new_output.hpp"

#include "dgq/errors.hpp"
#include "dgq/sim/files/output/output_target.hpp"
#include "dgq/sim/files/output/partial_file.hpp"
#include "output/runs_held.hpp"

namespace dgq::sim {

void require_new_output(const std::string& path, bool force, const std::string& command) {
  const StagedOutput staged = stage_output(path, RunsInTarget::replace);
  if (force || !resolve_output(path).exists) return;
  const HeldRuns held = runs_held(staged.target);
  const std::size_t runs = held.runs;
  const std::string what = runs > 0 ? " (" + std::to_string(runs) + " run(s), a " + held.format + " file)" : "";
  throw ParameterError(path + ": exists" + what + "; " + command +
                       " writes its results to a new file: choose another -o" +
                       (runs > 0 ? " (and join the two with dgq merge)" : "") + ", or pass --force to replace it");
}

}  // namespace dgq::sim

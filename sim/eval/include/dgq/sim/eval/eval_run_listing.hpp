#pragma once
// The runs an eval or passkey results file holds, for `dgq inspect`.
#include <string>
#include <vector>

namespace dgq::sim {

// The runs of an eval or passkey results file (dgq-eval, dgq-passkey-results): the model and each
// run's name and cache spec, in the order they were run (for dgq inspect).
struct EvalRunListing {
  std::string model;
  std::vector<std::string> names, specs;
};
EvalRunListing list_eval_runs(const std::string& path);

}  // namespace dgq::sim

// The runs of an eval or passkey results file, for `dgq inspect` (eval.hpp).
#include <algorithm>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval_run_listing.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/results_file.hpp"

namespace dgq::sim {

namespace {
// Runs are named 0, 1, 2, ... in the order they were given; listed in that order.
bool numerically_before(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}
}  // namespace

EvalRunListing list_eval_runs(const std::string& path) {
  h5::Handle file = h5::open_file_readonly(path);
  EvalRunListing listing;
  listing.model = h5::read_string_attribute(file.get(), "model", path);
  if (!h5::link_exists(file.get(), "runs")) return listing;
  h5::Handle runs = h5::open_group(file.get(), "runs", path + ": /runs");
  listing.names = child_names(runs.get(), path + ": /runs");
  std::sort(listing.names.begin(), listing.names.end(), numerically_before);
  for (const std::string& name : listing.names) {
    const std::string where = path + ": /runs/" + name;
    h5::Handle run = h5::open_group(runs.get(), name, where);
    listing.specs.push_back(h5::read_string_attribute(run.get(), "spec", where));
  }
  return listing;
}

}  // namespace dgq::sim

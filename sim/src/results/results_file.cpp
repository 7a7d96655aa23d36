// Listing runs and adding runs to a results file, never leaving it half-written: all writes
// go to PATH.partial (a copy of PATH), which replaces PATH by rename only once closed.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "dgq/errors.hpp"
#include "dgq/sim/results.hpp"
#include "provenance/provenance_attributes.hpp"
#include "results/h5_arrays.hpp"
#include "results/results_file.hpp"
#include "results/run_writer.hpp"

namespace dgq::sim {

namespace fs = std::filesystem;

namespace {

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

bool run_is_complete(hid_t runs, const std::string& name, const std::string& context) {
  h5::Handle g = h5::open_group(runs, name, context);
  if (!h5::has_attribute(g.get(), "complete")) return false;
  return h5::read_int_attribute(g.get(), "complete", context) == 1;
}

}  // namespace

std::vector<std::string> child_names(hid_t group, const std::string& context) {
  std::vector<std::string> names;
  h5::check_status(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names), context);
  return names;
}

bool RunListing::is_complete(const std::string& name) const {
  return std::find(complete.begin(), complete.end(), name) != complete.end();
}

const Provenance& RunListing::provenance_of(const std::string& complete_name) const {
  const auto it = std::find(complete.begin(), complete.end(), complete_name);
  if (it == complete.end()) throw ParameterError("run '" + complete_name + "' is not complete");
  return provenance[static_cast<std::size_t>(it - complete.begin())];
}

RunListing list_runs_in(hid_t file, const std::string& path) {
  RunListing listing;
  if (!h5::link_exists(file, "runs")) return listing;
  h5::Handle runs = h5::open_group(file, "runs", path + ": /runs");
  for (const std::string& name : child_names(runs.get(), path + ": /runs")) {
    const std::string where = path + ": /runs/" + name;
    if (!run_is_complete(runs.get(), name, where)) {
      listing.incomplete.push_back(name);
      continue;
    }
    listing.complete.push_back(name);
    h5::Handle g = h5::open_group(runs.get(), name, where);
    listing.provenance.push_back(read_provenance_attributes(g.get(), where));
  }
  return listing;
}

RunListing list_runs(const std::string& path) {
  if (!fs::exists(path)) return {};
  h5::Handle file = h5::open_file_readonly(path);
  return list_runs_in(file.get(), path);
}

void write_results_root(hid_t file) {
  h5::write_string_attribute(file, "format", kResultsFormat);
  h5::write_int_attribute(file, "version", kResultsVersion);
  write_build_attributes(file);  // the build that wrote the file; each run records its own
}

void add_run_groups(const std::string& path, const std::vector<std::string>& new_names, bool replace,
                    const std::function<void(hid_t file)>& write_new) {
  std::set<std::string> names;
  for (const auto& n : new_names) {
    if (!names.insert(n).second) throw ParameterError("run name '" + n + "' is given twice");
  }
  const std::string partial = path + ".partial";
  // The new file is written from scratch: the old file's complete runs are copied over
  // (copy_run_group), so incomplete or replaced runs leave no dead space behind.
  h5::Handle file = h5::create_file(partial);
  PartialFile guard(partial);  // armed only once this process has created the file
  write_results_root(file.get());
  h5::Handle dst_runs = h5::create_group(file.get(), "runs", partial + ": /runs");
  if (fs::exists(path)) {
    h5::Handle old = h5::open_file_readonly(path);
    const RunListing listing = list_runs_in(old.get(), path);
    for (const auto& n : new_names) {
      if (listing.is_complete(n) && !replace) {
        throw ParameterError(path + ": run '" + n + "' already exists (use --force to replace it)");
      }
    }
    if (!listing.complete.empty()) {
      h5::Handle src_runs = h5::open_group(old.get(), "runs", path + ": /runs");
      for (const std::string& name : listing.complete) {
        if (names.count(name)) continue;  // replaced below
        copy_run_group(src_runs.get(), dst_runs.get(), name, path);
      }
    }
  }
  dst_runs.reset();
  write_new(file.get());
  h5::close_file(file, partial);
  guard.commit_to(path);
}

void add_runs(const std::string& path, const std::vector<RunResult>& runs, bool replace) {
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  add_run_groups(path, names, replace, [&](hid_t file) {
    for (const auto& r : runs) write_run(file, r, path);
  });
}

}  // namespace dgq::sim

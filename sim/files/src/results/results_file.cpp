// Listing runs and adding runs to a results file, never leaving it half-written: all writes
// go to PATH.partial (a copy of PATH), which replaces PATH by rename only once closed. A file
// this process wrote itself is copied byte for byte and appended to; any other is rewritten run
// by run (copy_run_group), so that libhdf5 never writes into a file it did not write.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <set>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/hdf5/typed_arrays.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "results/run_groups.hpp"
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

namespace {

std::atomic<std::size_t> rewrites{0};

void refuse_existing(const std::string& path, const RunListing& listing, const std::vector<std::string>& new_names,
                     bool replace) {
  for (const auto& n : new_names) {
    if (listing.is_complete(n) && !replace) {
      throw ParameterError(path + ": run '" + n + "' already exists (use --force to replace it)");
    }
  }
}

bool touches_existing(const RunListing& listing, const std::set<std::string>& names) {
  const auto named = [&](const std::string& n) { return names.count(n) > 0; };
  return std::any_of(listing.complete.begin(), listing.complete.end(), named) ||
         std::any_of(listing.incomplete.begin(), listing.incomplete.end(), named);
}

// The fast path, for a file this process wrote itself (a sweep's results after its first
// pass): the partial file is a byte copy of the results with the new runs added. Returns false,
// having written nothing, when the copy would keep dead space (an incomplete run, or a run to
// be replaced): the caller rewrites instead.
bool append_to_own_file(const std::string& path, const StagedOutput& staged, const std::vector<std::string>& new_names,
                        const std::set<std::string>& names, bool replace,
                        const std::function<void(hid_t file)>& write_new) {
  if (!h5::is_written_here(staged.target)) return false;
  fs::copy_file(staged.target, staged.partial, fs::copy_options::overwrite_existing);
  PartialFile guard(staged);
  h5::Handle file = h5::open_own_copy_readwrite(staged.partial, staged.target);
  const RunListing listing = list_runs_in(file.get(), path);
  refuse_existing(path, listing, new_names, replace);
  if (!listing.incomplete.empty() || touches_existing(listing, names) || !h5::link_exists(file.get(), "runs")) {
    file.reset();
    return false;  // the guard removes the copy
  }
  write_new(file.get());
  h5::close_file(file, staged.partial);
  guard.commit();
  return true;
}

}  // namespace

std::size_t results_files_rewritten() { return rewrites.load(); }

void require_results_output(const std::string& path) {
  const StagedOutput staged = stage_output(path, RunsInTarget::replace);  // a device or pipe is refused
  if (!fs::exists(staged.target)) return;
  h5::Handle file = h5::open_file_readonly(path);
  if (!h5::has_attribute(file.get(), "format")) return;  // results written before the attribute
  const std::string format = h5::read_string_attribute(file.get(), "format", path);
  if (format != kResultsFormat)
    throw InputError(path + ": attribute 'format' is '" + format + "', not a " + kResultsFormat +
                     " file; runs are added only to a results file: choose another output");
}

void add_run_groups(const std::string& path, const std::vector<std::string>& new_names, bool replace,
                    const std::function<void(hid_t file)>& write_new) {
  std::set<std::string> names;
  for (const auto& n : new_names) {
    if (!names.insert(n).second) throw ParameterError("run name '" + n + "' is given twice");
  }
  require_results_output(path);
  const StagedOutput staged = stage_output(path, RunsInTarget::replace);
  if (append_to_own_file(path, staged, new_names, names, replace, write_new)) return;
  // The new file is written from scratch: the old file's complete runs are copied over
  // (copy_run_group), so incomplete or replaced runs leave no dead space behind, and a file
  // from outside is only ever read, never written to.
  ++rewrites;
  h5::PartialOutput out(path, RunsInTarget::replace);
  write_results_root(out.file());
  h5::Handle dst_runs = h5::create_group(out.file(), "runs", out.partial() + ": /runs");
  if (fs::exists(staged.target)) {
    h5::Handle old = h5::open_file_readonly(path);
    const RunListing listing = list_runs_in(old.get(), path);
    refuse_existing(path, listing, new_names, replace);
    if (!listing.complete.empty()) {
      h5::Handle src_runs = h5::open_group(old.get(), "runs", path + ": /runs");
      for (const std::string& name : listing.complete) {
        if (names.count(name)) continue;  // replaced below
        copy_run_group(src_runs.get(), dst_runs.get(), name, path);
      }
    }
  }
  dst_runs.reset();
  write_new(out.file());
  out.commit();
}

void add_runs(const std::string& path, const std::vector<RunResult>& runs, bool replace) {
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  add_run_groups(path, names, replace, [&](hid_t file) {
    for (const auto& r : runs) write_run(file, r, path);
  });
}

}  // namespace dgq::sim

// `dgq merge`: complete runs of several results files (e.g. sweep shards) into one.
#include <algorithm>

#include "dgq/errors.hpp"
#include "dgq/sim/results.hpp"
#include "hdf5/partial_output.hpp"
#include "hdf5/typed_arrays.hpp"
#include "results/results_file.hpp"

namespace dgq::sim {

namespace {

// Every complete run of every input must have been written by one dgq version: the first run
// met is the reference, the first run of another version is named next to it. Runs written
// before provenance count as version "unknown". Checked before the output is created.
void require_one_version(const std::vector<std::string>& inputs) {
  std::string first_file, first_run;
  Provenance first;
  for (const std::string& in : inputs) {
    const RunListing listing = list_runs(in);
    for (std::size_t i = 0; i < listing.complete.size(); ++i) {
      const Provenance& p = listing.provenance[i];
      if (first_file.empty()) {
        first_file = in;
        first_run = listing.complete[i];
        first = p;
      } else if (p.version != first.version) {
        throw InputError(in + ": run " + listing.complete[i] + " was written by dgq " + p.version + " (config " +
                         p.config_hash + "), " + first_file + ": run " + first_run + " by dgq " + first.version +
                         " (config " + first.config_hash + "); merge runs of one dgq version or pass " +
                         kAllowMixedFlag);
      }
    }
  }
}

}  // namespace

MergeReport merge_results(const std::string& out, const std::vector<std::string>& inputs, bool allow_mixed_versions) {
  if (inputs.empty()) throw ParameterError("merge: no input files");
  if (!allow_mixed_versions) require_one_version(inputs);
  MergeReport report;
  const std::string partial = out + ".partial";
  h5::PartialOutput dst(out);
  write_results_root(dst.file());
  h5::Handle dst_runs = h5::create_group(dst.file(), "runs", partial + ": /runs");
  std::vector<std::string> origin_of;  // parallel to the merged names, for messages
  std::vector<std::string> merged;
  for (const std::string& in : inputs) {
    h5::Handle src = h5::open_file_readonly(in);
    const RunListing listing = list_runs_in(src.get(), in);
    report.skipped_incomplete += listing.incomplete.size();
    if (listing.complete.empty()) continue;
    h5::Handle src_runs = h5::open_group(src.get(), "runs", in + ": /runs");
    for (const std::string& name : listing.complete) {
      const auto it = std::find(merged.begin(), merged.end(), name);
      if (it == merged.end()) {
        copy_run_group(src_runs.get(), dst_runs.get(), name, in);
        merged.push_back(name);
        origin_of.push_back(in);
        ++report.copied;
        continue;
      }
      h5::Handle a = h5::open_group(dst_runs.get(), name, partial);
      h5::Handle b = h5::open_group(src_runs.get(), name, in);
      const std::string why = diff_run_groups(a.get(), b.get(), "/runs/" + name);
      if (!why.empty()) {
        throw InputError("merge: run '" + name + "' differs between " + origin_of[it - merged.begin()] + " and " + in +
                         ": " + why);
      }
      ++report.identical_duplicates;
    }
  }
  dst_runs.reset();
  dst.commit();
  return report;
}

}  // namespace dgq::sim

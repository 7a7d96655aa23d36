// `dgq merge`: complete runs of several results files (e.g. sweep shards) into one.
#include <algorithm>

#include "dgq/errors.hpp"
#include "dgq/sim/results.hpp"
#include "results/h5_arrays.hpp"
#include "results/results_file.hpp"

namespace dgq::sim {

MergeReport merge_results(const std::string& out, const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw ParameterError("merge: no input files");
  MergeReport report;
  const std::string partial = out + ".partial";
  h5::Handle dst = h5::create_file(partial);
  PartialFile guard(partial);  // armed only once this process has created the file
  write_results_root(dst.get());
  h5::Handle dst_runs = h5::create_group(dst.get(), "runs", partial + ": /runs");
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
  h5::close_file(dst, partial);
  guard.commit_to(out);
  return report;
}

}  // namespace dgq::sim

// `dgq merge`: complete runs of several results files (e.g. sweep shards) into one.
#include <algorithm>
#include <filesystem>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/hdf5/typed_arrays.hpp"
#include "dgq/sim/files/output/output_target.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "output/runs_held.hpp"
#include "results/merge_scheme_runs.hpp"
#include "results/run_groups.hpp"

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

// The output is a new path or one of the inputs (whose runs are merged, so none is lost);
// any other file there is replaced only when forced. Checked before any input is read.
void require_merge_output(const std::string& out, const std::vector<std::string>& inputs, bool force) {
  (void)stage_output(out, RunsInTarget::replace);  // a directory, device or pipe is refused
  const OutputTarget target = resolve_output(out);
  if (!target.exists || force) return;
  for (const std::string& in : inputs) {
    std::error_code ignored;
    if (std::filesystem::equivalent(target.path, in, ignored)) return;
  }
  const std::size_t runs = runs_held(target.path).runs;
  throw ParameterError(out + ": exists" + (runs > 0 ? " and holds " + std::to_string(runs) + " run(s)" : "") +
                       "; dgq merge would replace it: name it among the inputs to keep its runs (dgq merge " + out +
                       " " + out + " ...), or pass --force to replace it");
}

// The one format of every input: dgq-results (replay, sweep; also files written before the
// format attribute), dgq-eval or dgq-passkey-results.
std::string common_results_format(const std::vector<std::string>& inputs) {
  std::string first_format, first_input;
  for (const std::string& in : inputs) {
    h5::Handle file = h5::open_file_readonly(in);
    const std::string format = h5::has_attribute(file.get(), "format")
                                   ? h5::read_string_attribute(file.get(), "format", in)
                                   : std::string(kResultsFormat);
    if (format != kResultsFormat && format != "dgq-eval" && format != "dgq-passkey-results")
      throw InputError(in + ": attribute 'format' is '" + one_line(format) +
                       "', not a results file; dgq merge joins dgq-results (replay, sweep), dgq-eval or "
                       "dgq-passkey-results files");
    if (first_input.empty()) {
      first_format = format;
      first_input = in;
    } else if (format != first_format) {
      throw InputError("merge: " + first_input + " is a " + first_format + " file and " + in + " a " + format +
                       " file: merge files of one kind");
    }
  }
  return first_format;
}

}  // namespace

MergeReport merge_results(const std::string& out, const std::vector<std::string>& inputs, bool allow_mixed_versions,
                          bool force) {
  if (inputs.empty()) throw ParameterError("merge: no input files");
  require_merge_output(out, inputs, force);
  if (common_results_format(inputs) != kResultsFormat) return merge_scheme_run_files(out, inputs, allow_mixed_versions);
  if (!allow_mixed_versions) require_one_version(inputs);
  std::size_t complete = 0, incomplete = 0;
  for (const std::string& in : inputs) {
    const RunListing listing = list_runs(in);
    complete += listing.complete.size();
    incomplete += listing.incomplete.size();
  }
  if (complete == 0)
    throw InputError("merge: no complete run in " + std::to_string(inputs.size()) + " input(s) (" +
                     std::to_string(incomplete) + " incomplete run(s)); nothing written");
  MergeReport report;
  h5::PartialOutput dst(out, RunsInTarget::replace);
  const std::string partial = dst.partial();
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

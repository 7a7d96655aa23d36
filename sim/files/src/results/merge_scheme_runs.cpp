#include "results/merge_scheme_runs.hpp"

#include <algorithm>
#include <map>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "results/run_groups.hpp"

namespace dgq::sim {

namespace {

// The root's settings: everything but the provenance of the file's writer and the runs.
const DiffSkip kRootSettings{{kAttrDgqVersion, kAttrDgqCommit, kAttrDgqDirty, kAttrConfigHash}, {"runs"}};
// A run's own provenance, left out of the comparison of duplicates when versions may mix.
const DiffSkip kRunProvenance{{kAttrDgqVersion, kAttrDgqCommit, kAttrDgqDirty}, {}};

struct SourceRun {
  std::size_t input = 0;  // index into the inputs
  std::string name;       // its /runs/<name> there
  std::string spec;
  Provenance provenance;

  // The same configuration: the config hash, or the spec in files written before provenance.
  std::string key() const {
    return provenance.config_hash != kNotRecorded ? "config " + provenance.config_hash : "spec " + spec;
  }
};

std::string describe_source_run(const SourceRun& r, const std::vector<std::string>& inputs) {
  return inputs[r.input] + ": run " + r.name + " (" + one_line(r.spec) + ")";
}

// /runs/0, /runs/1, ..., /runs/10 in number order (child_names gives name order: 0, 1, 10, 2).
std::vector<std::string> run_indices_in_order(hid_t runs, const std::string& path) {
  std::vector<std::string> names = child_names(runs, path + ": /runs");
  for (const std::string& n : names) {
    if (n.empty() || n.size() > 18 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InputError(path + ": /runs/" + one_line(n) + ": not a run index (runs are /runs/0, /runs/1, ...)");
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return names;
}

std::vector<SourceRun> scheme_runs_of(hid_t file, std::size_t input, const std::string& path) {
  std::vector<SourceRun> runs;
  if (!h5::link_exists(file, "runs")) return runs;
  h5::Handle group = h5::open_group(file, "runs", path + ": /runs");
  for (const std::string& name : run_indices_in_order(group.get(), path)) {
    const std::string where = path + ": /runs/" + name;
    require_hard_link(group.get(), name, where);
    h5::Handle run = h5::open_group(group.get(), name, where);
    runs.push_back({input, name, h5::read_string_attribute(run.get(), "spec", where),
                    read_provenance_attributes(run.get(), where)});
  }
  return runs;
}

void require_same_root_settings(const std::vector<h5::Handle>& files, const std::vector<std::string>& inputs) {
  for (std::size_t k = 1; k < files.size(); ++k) {
    const std::string why = diff_run_groups(files[0].get(), files[k].get(), "the root", kRootSettings);
    if (!why.empty())
      throw InputError("merge: " + inputs[0] + " and " + inputs[k] + " hold runs of different settings (" + why +
                       "); a merged file holds the runs of one configuration: merge files of other settings apart");
  }
}

void require_one_run_version(const std::vector<SourceRun>& runs, const std::vector<std::string>& inputs) {
  for (const SourceRun& r : runs) {
    const SourceRun& first = runs.front();
    if (r.provenance.version == first.provenance.version) continue;
    throw InputError(describe_source_run(r, inputs) + " was written by dgq " + r.provenance.version + " (config " +
                     r.provenance.config_hash + "), " + describe_source_run(first, inputs) + " by dgq " +
                     first.provenance.version + " (config " + first.provenance.config_hash +
                     "); merge runs of one dgq version or pass " + kAllowMixedFlag);
  }
}

// The run groups as the two files hold them, compared.
std::string diff_source_runs(const std::vector<h5::Handle>& files, const std::vector<std::string>& inputs,
                             const SourceRun& a, const SourceRun& b, bool allow_mixed_versions) {
  const std::string path_a = inputs[a.input] + ": /runs", path_b = inputs[b.input] + ": /runs";
  h5::Handle runs_a = h5::open_group(files[a.input].get(), "runs", path_a);
  h5::Handle runs_b = h5::open_group(files[b.input].get(), "runs", path_b);
  h5::Handle ga = h5::open_group(runs_a.get(), a.name, path_a + "/" + a.name);
  h5::Handle gb = h5::open_group(runs_b.get(), b.name, path_b + "/" + b.name);
  return diff_run_groups(ga.get(), gb.get(), "/runs/" + b.name, allow_mixed_versions ? kRunProvenance : DiffSkip{});
}

// The runs to keep, each configuration once, in input order.
std::vector<SourceRun> distinct_source_runs(const std::vector<h5::Handle>& files, const std::vector<SourceRun>& all,
                                            const std::vector<std::string>& inputs, bool allow_mixed_versions,
                                            MergeReport& report) {
  std::vector<SourceRun> kept;
  std::map<std::string, std::size_t> by_key, by_spec;
  for (const SourceRun& r : all) {
    if (const auto same = by_key.find(r.key()); same != by_key.end()) {
      const SourceRun& first = kept[same->second];
      if (const std::string why = diff_source_runs(files, inputs, first, r, allow_mixed_versions); !why.empty())
        throw InputError("merge: " + describe_source_run(first, inputs) + " and " + describe_source_run(r, inputs) +
                         " are one configuration but differ: " + why);
      ++report.identical_duplicates;
      continue;
    }
    if (const auto same = by_spec.find(r.spec); same != by_spec.end()) {
      const SourceRun& first = kept[same->second];
      throw InputError("merge: " + describe_source_run(first, inputs) + " has config hash " +
                       first.provenance.config_hash + ", " + describe_source_run(r, inputs) + " " +
                       r.provenance.config_hash +
                       ": the same scheme in another configuration (another text, or a setting the files do not "
                       "record); a merged file holds the runs of one configuration");
    }
    by_key.emplace(r.key(), kept.size());
    by_spec.emplace(r.spec, kept.size());
    kept.push_back(r);
  }
  return kept;
}

// The merged file's config hash: its runs', in order (no single command ran them all).
std::string merged_config_hash(const std::vector<SourceRun>& runs) {
  std::string text = "merge\n";
  for (const SourceRun& r : runs) text += "run=" + r.provenance.config_hash + "\n";
  return config_hash(text);
}

}  // namespace

MergeReport merge_scheme_run_files(const std::string& out, const std::vector<std::string>& inputs,
                                   bool allow_mixed_versions) {
  std::vector<h5::Handle> files;
  std::vector<SourceRun> all;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    files.push_back(h5::open_file_readonly(inputs[k]));
    const std::vector<SourceRun> runs = scheme_runs_of(files.back().get(), k, inputs[k]);
    all.insert(all.end(), runs.begin(), runs.end());
  }
  if (all.empty()) throw InputError("merge: no run in " + std::to_string(inputs.size()) + " input(s); nothing written");
  require_same_root_settings(files, inputs);
  if (!allow_mixed_versions) require_one_run_version(all, inputs);
  MergeReport report;
  const std::vector<SourceRun> kept = distinct_source_runs(files, all, inputs, allow_mixed_versions, report);

  h5::PartialOutput dst(out, RunsInTarget::replace);  // merge_results checked the output
  copy_group_except(files[0].get(), dst.file(), inputs[0], kRootSettings);
  write_provenance_attributes(dst.file(), merged_config_hash(kept));
  h5::Handle dst_runs = h5::create_group(dst.file(), "runs", dst.partial() + ": /runs");
  for (std::size_t j = 0; j < kept.size(); ++j) {
    const SourceRun& r = kept[j];
    h5::Handle src_runs = h5::open_group(files[r.input].get(), "runs", inputs[r.input] + ": /runs");
    copy_run_group(src_runs.get(), dst_runs.get(), r.name, inputs[r.input], std::to_string(j));
  }
  report.copied = kept.size();
  dst_runs.reset();
  dst.commit();
  return report;
}

}  // namespace dgq::sim

#pragma once
// `dgq merge`: results files joined into one, and the comparison of two runs that decides
// whether a duplicate is the same run (docs/results-format.md, "Merging").
#include <cstddef>
#include <string>
#include <vector>

namespace dgq::sim {

// Joins results files into OUT (written through OUT.partial). Every input must be of one kind:
// dgq-results (replay, sweep), dgq-eval or dgq-passkey-results (merge_scheme_runs.hpp: one
// configuration, runs renumbered, each configuration once), else InputError naming the file.
// dgq-results: complete runs are copied; incomplete ones are skipped. A name present in several
// inputs must have identical contents (attributes and datasets), else dgq::InputError names the
// run and the difference.
// Every complete run must record one dgq version (docs/results-format.md, "Provenance"), else
// InputError "B: run Y was written by dgq VB (config HB), A: run X by dgq VA (config HA);
// merge runs of one dgq version or pass --allow-mixed-versions" before OUT is created;
// allow_mixed_versions copies them as they are, each run keeping its own version.
// OUT may be new or one of the inputs (its runs are kept); any other existing OUT is refused
// (ParameterError) unless `force`. No run to keep is an InputError: nothing is written.
struct MergeReport {
  std::size_t copied = 0, identical_duplicates = 0, skipped_incomplete = 0;
};
MergeReport merge_results(const std::string& out, const std::vector<std::string>& inputs,
                          bool allow_mixed_versions = false, bool force = false);

// Compares two run groups in two files; empty string if identical, else what differs.
std::string compare_runs(const std::string& path_a, const std::string& path_b, const std::string& name);

}  // namespace dgq::sim

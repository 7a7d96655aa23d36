#pragma once
// `dgq merge` of files that hold the runs of one configuration, one run per scheme: dgq eval
// results (dgq-eval) and passkey results (dgq-passkey-results), docs/results-format.md
// ("Merging eval and passkey results").
#include <string>
#include <vector>

#include "dgq/sim/files/results/merge.hpp"

namespace dgq::sim {

// Every input's root, its provenance aside, must equal the first's: every setting attribute
// (whichever the files have: a new identity attribute is compared with no change here) and every
// root dataset (the passkey task's fields). A run is identified by its config_hash (its spec in
// files written before provenance): the same run in several inputs must be identical (its
// provenance aside with allow_mixed_versions) and is kept once; one scheme (spec) under two
// config hashes is refused (another text, or a setting the roots do not record). The runs are
// renumbered /runs/0, 1, ... in input order, so an eval file's base stays run 0. Throws
// InputError naming both files, the runs and the first difference; nothing is written then.
MergeReport merge_scheme_run_files(const std::string& out, const std::vector<std::string>& inputs,
                                   bool allow_mixed_versions);

}  // namespace dgq::sim

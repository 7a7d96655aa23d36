#pragma once
// Whether a file holds results runs: the one question every writer asks before it replaces a
// file, so that no output (a compressed file, a trace, a table, a JSON summary, a results file of
// another command) is ever written over a user's runs (docs/robustness.md, "Outputs").
#include <cstddef>
#include <string>

namespace dgq::sim {

struct HeldRuns {
  std::string format;    // "dgq-results", "dgq-eval" or "dgq-passkey-results"; "" for any other file
  std::size_t runs = 0;  // its run groups (/runs/<name>, complete or not)
};
// The runs of the results file at `path`; none for anything else: no file, not a regular file,
// not HDF5, another format, or an HDF5 file dgq cannot read (it holds no run dgq could keep).
HeldRuns runs_held(const std::string& path);

// Throws InputError("PATH: holds N run(s) (a FORMAT file); WHAT would replace them: ...")
// when runs_held(path) > 0; `what` names the writer ("this output", "dgq eval").
void refuse_to_replace_runs(const std::string& path, const std::string& what);

}  // namespace dgq::sim

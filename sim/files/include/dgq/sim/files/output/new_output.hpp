#pragma once
// The -o of a command that writes its results file whole, once (dgq eval, its passkey task):
// the file must be new, or be replaced on purpose (--force), so that a rerun never replaces a
// file of earlier runs without a word (docs/cli.md, "Outputs"). Checked before any work.
#include <string>

namespace dgq::sim {

// Throws ParameterError when `path` exists and !force: "PATH: exists (N run(s), a FORMAT file);
// COMMAND writes its results to a new file: choose another -o (and join the two with dgq
// merge), or pass --force to replace it". A directory, device or pipe is refused always
// (stage_output).
void require_new_output(const std::string& path, bool force, const std::string& command);

}  // namespace dgq::sim

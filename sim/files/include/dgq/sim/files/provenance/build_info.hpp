#pragma once
// The identity of this dgq build (docs/results-format.md, "Provenance"): the git commit it was
// built from and whether the checkout had uncommitted changes to tracked files, recorded at
// build time by cmake/DgqBuildInfo.cmake. Every file dgq writes that carries results records it,
// so that runs of different code are never mixed without saying so.
#include <string>

namespace dgq::sim {

struct BuildInfo {
  std::string commit;     // 40 hex digits, or "unknown" (no git, or not built from a checkout)
  bool dirty = false;     // tracked files differed from the commit
  std::string diff_hash;  // dirty builds: 8 hex digits of the SHA-256 of `git diff HEAD`; else ""
  // "<commit>" or "<commit>-dirty-<diff_hash>": what `dgq --version` prints and files record.
  std::string version_string() const;
};

const BuildInfo& build_info();

}  // namespace dgq::sim

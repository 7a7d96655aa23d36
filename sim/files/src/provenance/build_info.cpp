// dgq::sim::build_info(): the generated build identity as one value.
#include "dgq/sim/files/provenance/build_info.hpp"

#include "provenance/build_info_data.hpp"

namespace dgq::sim {

std::string BuildInfo::version_string() const { return dirty ? commit + "-dirty-" + diff_hash : commit; }

const BuildInfo& build_info() {
  static const BuildInfo info{generated::kBuildCommit, generated::kBuildDirty, generated::kBuildDiffHash};
  return info;
}

}  // namespace dgq::sim

#include "perplexity/version_label.hpp"

#include <algorithm>

#include "dgq/sim/files/provenance/build_info.hpp"

namespace dgq::sim {

VersionLabel::VersionLabel() : versions_{build_info().version_string()} {}

void VersionLabel::add(const std::string& version) {
  if (std::find(versions_.begin(), versions_.end(), version) == versions_.end()) versions_.push_back(version);
}

std::string VersionLabel::text() const {
  std::string joined;
  for (const auto& v : versions_) joined += (joined.empty() ? "" : "+") + v;
  return joined;
}

}  // namespace dgq::sim

#pragma once
// The dgq_version label of an eval result: with --allow-mixed-versions a result may be made of
// chunks and base logits of other builds, and the label must name every one of them.
#include <string>
#include <vector>

namespace dgq::sim {

// This build's version first, then every other version added, each once, joined by '+'.
class VersionLabel {
 public:
  VersionLabel();
  void add(const std::string& version);
  std::string text() const;

 private:
  std::vector<std::string> versions_;
};

}  // namespace dgq::sim

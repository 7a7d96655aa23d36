#pragma once
// A one-line progress bar on stderr for long runs (`dgq eval`): stdout carries the results and
// is compared byte for byte, so progress never goes there.
#include <cstdint>
#include <string>

namespace dgq::sim {

class ProgressBar {
 public:
  // Disabled bars print nothing (stderr not a terminal: logs stay free of carriage returns).
  ProgressBar(bool enabled, std::int64_t total) : enabled_(enabled), total_(total) {}
  // "\r[####....] done/total what", ended by a newline once done == total.
  void show(std::int64_t done, const std::string& what) const;

 private:
  bool enabled_;
  std::int64_t total_;
};

}  // namespace dgq::sim

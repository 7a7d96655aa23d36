#pragma once
// Progress of long runs (`dgq eval`, eval sweeps) on stderr: stdout carries the results and is
// compared byte for byte, so progress never goes there.
#include <cstdint>
#include <string>

namespace dgq::sim {

class ProgressBar {
 public:
  // A disabled bar prints nothing. An enabled one draws a bar on a terminal and, when stderr is
  // a file or a pipe (`--progress` with a redirect), one plain line per step instead, so a log
  // shows how far a long run got without carriage returns.
  ProgressBar(bool enabled, std::int64_t total);
  // Terminal: "\r[####....] done/total what", ended by a newline once done == total.
  // Otherwise: "done/total what\n".
  void show(std::int64_t done, const std::string& what) const;

 private:
  bool enabled_;
  bool terminal_;
  std::int64_t total_;
};

}  // namespace dgq::sim

#include "output/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace dgq::sim {

ProgressBar::ProgressBar(bool enabled, std::int64_t total)
    : enabled_(enabled), terminal_(isatty(fileno(stderr)) != 0), total_(total) {}

void ProgressBar::show(std::int64_t done, const std::string& what) const {
  if (!enabled_) return;
  if (!terminal_) {
    std::cerr << done << "/" << total_ << " " << what << "\n" << std::flush;
    return;
  }
  const int width = 30;
  const auto filled = static_cast<int>(width * done / std::max<std::int64_t>(1, total_));
  // The trailing blanks overwrite the end of a longer previous line ("\r" does not clear it).
  std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << "/" << total_
            << " " << what << "          " << std::flush;
  if (done == total_) std::cerr << "\n";
}

}  // namespace dgq::sim

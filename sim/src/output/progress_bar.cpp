#include "output/progress_bar.hpp"

#include <algorithm>
#include <iostream>

namespace dgq::sim {

void ProgressBar::show(std::int64_t done, const std::string& what) const {
  if (!enabled_) return;
  const int width = 30;
  const auto filled = static_cast<int>(width * done / std::max<std::int64_t>(1, total_));
  // The trailing blanks overwrite the end of a longer previous line ("\r" does not clear it).
  std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << "/" << total_
            << " " << what << "          " << std::flush;
  if (done == total_) std::cerr << "\n";
}

}  // namespace dgq::sim

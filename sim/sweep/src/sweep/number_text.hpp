#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dgq::sim {
// The shortest %g text that reads back as the same double ("0.05", not "0.050000000000000003"),
// used in scheme specs and trace labels so that names stay readable and deterministic.
inline std::string short_number(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}
}  // namespace dgq::sim

// Names of the runs in a results file (run_result.hpp): HDF5 group names, so never a '/'.
#include <filesystem>
#include <string>
#include <string_view>

#include "dgq/sim/files/results/run_result.hpp"

namespace dgq::sim {

std::string sanitize_run_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      std::string_view("._=,@+-").find(c) != std::string_view::npos;
    if (!keep) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::string default_run_name(const std::string& scheme_spec, const std::string& trace_path) {
  return sanitize_run_name(scheme_spec + "@" + std::filesystem::path(trace_path).stem().string());
}

}  // namespace dgq::sim

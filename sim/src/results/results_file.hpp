#pragma once
// Internals shared by the results writer and `dgq merge`.
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dgq/sim/results.hpp"

namespace dgq::sim {

// Names of the links in a group, in name order.
std::vector<std::string> child_names(hid_t group, const std::string& context);
RunListing list_runs_in(hid_t file, const std::string& path);
// Root attributes of a results file: format = "dgq-results", version = 1.
void write_results_root(hid_t file);

// Removes PATH.partial unless committed; keeps a failed write from lingering.
class PartialFile {
 public:
  explicit PartialFile(std::string path) : path_(std::move(path)) {}
  ~PartialFile() {
    if (!path_.empty()) {
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
  }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  void commit_to(const std::string& final_path) {
    std::filesystem::rename(path_, final_path);
    path_.clear();
  }

 private:
  std::string path_;
};

}  // namespace dgq::sim

namespace dgq::sim {
// "" when the two run groups are identical, else the first difference (path and what).
std::string diff_run_groups(hid_t a, hid_t b, const std::string& where);
}  // namespace dgq::sim

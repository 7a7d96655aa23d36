#pragma once
// An HDF5 output file that only appears under its final name when complete (the rule and its
// one implementation: output/partial_file.hpp): everything is written to PATH.partial,
// commit() closes the file and renames it; destroyed without commit() (an exception, a failed
// check) the partial file is removed.
#include <optional>
#include <string>

#include "hdf5/h5.hpp"
#include "output/partial_file.hpp"

namespace dgq::sim::h5 {

class PartialOutput {
 public:
  // The guard is armed only once this process has created PATH.partial: a failed create
  // removes nothing it did not make.
  explicit PartialOutput(std::string path) : path_(std::move(path)), file_(create_file(path_ + ".partial")) {
    guard_.emplace(path_ + ".partial");
  }
  ~PartialOutput() { file_.reset(); }  // closed before the guard removes the file
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  hid_t file() const { return file_.get(); }
  const std::string& path() const { return path_; }

  void commit() {
    close_file(file_, guard_->partial());
    guard_->commit_to(path_);
  }

 private:
  std::string path_;
  Handle file_;
  std::optional<PartialFile> guard_;
};

}  // namespace dgq::sim::h5

#pragma once
// An HDF5 output file that only appears under its final name when complete (the rule and its
// one implementation: output/partial_file.hpp): everything is written to PATH.partial,
// commit() closes the file and renames it; destroyed without commit() (an exception, a failed
// check) the partial file is removed.
#include <string>

#include "hdf5/h5.hpp"
#include "output/partial_file.hpp"

namespace dgq::sim::h5 {

class PartialOutput {
 public:
  explicit PartialOutput(std::string path) : path_(std::move(path)), guard_(path_ + ".partial") {
    file_ = create_file(guard_.partial());
  }
  ~PartialOutput() { file_.reset(); }  // before the guard removes the file
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  hid_t file() const { return file_.get(); }
  const std::string& path() const { return path_; }

  void commit() {
    close_file(file_, guard_.partial());
    guard_.commit_to(path_);
  }

 private:
  std::string path_;
  PartialFile guard_;
  Handle file_;
};

}  // namespace dgq::sim::h5

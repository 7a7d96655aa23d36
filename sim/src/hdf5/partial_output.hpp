#pragma once
// An output file that only appears under its final name when complete: everything is
// written to PATH.partial, commit() closes the HDF5 file and renames it; destroyed without
// commit() (an exception, a failed check) the partial file is removed. Reusable by any
// writer of HDF5 outputs (results files included).
#include <filesystem>
#include <string>

#include "hdf5/h5.hpp"
#include "hdf5/isolated_metadata_check.hpp"

namespace dgq::sim::h5 {

class PartialOutput {
 public:
  explicit PartialOutput(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {
    file_ = create_file(partial_);
  }
  ~PartialOutput() {
    if (committed_) return;
    file_.reset();
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);
  }
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  hid_t file() const { return file_.get(); }
  const std::string& path() const { return path_; }

  void commit() {
    close_file(file_, partial_);
    std::filesystem::rename(partial_, path_);
    committed_ = true;
    remember_written_here(path_);  // written by libhdf5 here: reading it back needs no check
  }

 private:
  std::string path_, partial_;
  Handle file_;
  bool committed_ = false;
};

}  // namespace dgq::sim::h5

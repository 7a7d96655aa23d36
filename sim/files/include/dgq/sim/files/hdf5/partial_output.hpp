#pragma once
// An HDF5 output file that only appears under its final name when complete (the rule and its
// one implementation: output/partial_file.hpp): everything is written to TARGET.partial,
// commit() closes the file and renames it; destroyed without commit() (an exception, a failed
// check) the partial file is removed. A device, FIFO or socket is refused (HDF5 writes a file
// it can seek), and so is a file holding runs unless the writer keeps them (RunsInTarget).
#include <optional>
#include <string>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/output/partial_file.hpp"

namespace dgq::sim::h5 {

class PartialOutput {
 public:
  // The guard is armed only once this process has created TARGET.partial: a failed create
  // removes nothing it did not make.
  explicit PartialOutput(std::string path, RunsInTarget runs = RunsInTarget::refuse)
      : path_(std::move(path)), staged_(stage_output(path_, runs)), file_(create_file(staged_.partial)) {
    guard_.emplace(staged_);
  }
  ~PartialOutput() { file_.reset(); }  // closed before the guard removes the file
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  hid_t file() const { return file_.get(); }
  const std::string& path() const { return path_; }
  const std::string& partial() const { return staged_.partial; }

  void commit() {
    close_file(file_, guard_->partial());
    guard_->commit();
  }

 private:
  std::string path_;
  StagedOutput staged_;
  Handle file_;
  std::optional<PartialFile> guard_;
};

}  // namespace dgq::sim::h5

#pragma once
// Every file dgq writes appears under its final name only when complete: it is written as
// PATH.partial and renamed once closed, and a writer that fails or is killed leaves no file
// that looks complete (docs/robustness.md). This is the one implementation of that rule:
//   - PartialFile: the guard of PATH.partial (removed unless committed; commit renames it);
//   - write_text_file (dgq/sim/text_output.hpp): a whole text file through a PartialFile;
//   - h5::PartialOutput (hdf5/partial_output.hpp): an HDF5 file through a PartialFile.
#include <string>

#include "dgq/sim/text_output.hpp"  // write_text_file

namespace dgq::sim {

class PartialFile {
 public:
  // Guards `partial` (the writer creates it); PartialFile("x.h5.partial").commit_to("x.h5").
  explicit PartialFile(std::string partial) : partial_(std::move(partial)) {}
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  const std::string& partial() const { return partial_; }
  // Renames the partial file to final_path and remembers it as written by this process
  // (h5::remember_written_here: reading it back needs no metadata check).
  void commit_to(const std::string& final_path);

 private:
  std::string partial_;
};

}  // namespace dgq::sim

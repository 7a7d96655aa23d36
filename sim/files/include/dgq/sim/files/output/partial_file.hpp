#pragma once
// Every file dgq writes appears under its final name only when complete: it is written as
// TARGET.partial and renamed once closed, and a writer that fails or is killed leaves no file
// that looks complete (docs/robustness.md). This is the one implementation of that rule:
//   - stage_output: where an output is staged (output_target.hpp: a link's target; a device,
//     FIFO or socket refused) and whether the file there may be replaced (runs_held.hpp);
//   - PartialFile: the guard of TARGET.partial (removed unless committed; commit renames it);
//   - write_text_file (dgq/sim/files/output/text_output.hpp): a whole text file through a PartialFile, or
//     written through a stream (--json /dev/stdout);
//   - h5::PartialOutput (hdf5/partial_output.hpp): an HDF5 file through a PartialFile.
#include <string>

#include "dgq/sim/files/output/text_output.hpp"  // write_text_file

namespace dgq::sim {

// Whether the file an output replaces may hold runs: only the writers that keep them (results
// files adding runs, dgq merge, dgq eval after its --force check) say `replace`.
enum class RunsInTarget { refuse, replace };

struct StagedOutput {
  std::string target;   // the regular file (or new path) that the output replaces
  std::string partial;  // target + ".partial"
};

// Throws InputError when `output` is not a file dgq can replace whole (a directory, a device,
// FIFO or socket: "PATH: not a regular file ..."), or, with RunsInTarget::refuse, when the file
// there holds runs (refuse_to_replace_runs).
StagedOutput stage_output(const std::string& output, RunsInTarget runs = RunsInTarget::refuse);

class PartialFile {
 public:
  // Guards staged.partial (the writer creates it): PartialFile(stage_output("x.h5")).commit().
  explicit PartialFile(StagedOutput staged) : staged_(std::move(staged)) {}
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  const std::string& partial() const { return staged_.partial; }
  const std::string& target() const { return staged_.target; }
  // Renames the partial file over the target and remembers it as written by this process
  // (h5::remember_written_here: reading it back needs no metadata check).
  void commit();

 private:
  StagedOutput staged_;
  bool committed_ = false;
};

}  // namespace dgq::sim

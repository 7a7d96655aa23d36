#pragma once
// A variable-length string lives in the file's global heap; libhdf5 1.10.8 can loop forever
// in H5HG__protect on a corrupt one (tests/fixtures/libhdf5, docs/robustness.md). dgq cannot
// interrupt libhdf5 and continue, so a read that does not finish within DGQ_HDF5_READ_TIMEOUT
// seconds (default 60; 0 = no limit, which the fuzz targets use) ends the process with one
// error line and exit code 2, naming the file and attribute. Reads happen on one thread.
#include <string>

namespace dgq::sim::h5 {

// Armed (SIGALRM) while alive; `where` names the file and object in the error line.
class ReadDeadline {
 public:
  explicit ReadDeadline(const std::string& where);
  ~ReadDeadline();
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

 private:
  unsigned seconds_;
};

}  // namespace dgq::sim::h5

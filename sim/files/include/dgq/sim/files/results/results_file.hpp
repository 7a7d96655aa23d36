#pragma once
// Results files of `dgq replay` / `dgq sweep` (docs/results-format.md): one HDF5 file with
// one group per run, /runs/<name>, whose attribute `complete` = 1 is written last. A run
// without it is treated as absent everywhere (listing, resume, merge).
#include <hdf5.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/results/run_result.hpp"

namespace dgq::sim {

inline constexpr const char* kResultsFormat = "dgq-results";
inline constexpr int kResultsVersion = 1;

// Complete and incomplete run names in a results file; both empty if the file does not exist.
// Each complete run's recorded dgq version and config hash ("unknown" where not recorded) are
// in `provenance`, parallel to `complete`.
struct RunListing {
  std::vector<std::string> complete, incomplete;
  std::vector<Provenance> provenance;
  bool is_complete(const std::string& name) const;
  const Provenance& provenance_of(const std::string& complete_name) const;
};
RunListing list_runs(const std::string& path);

// Throws InputError unless PATH may receive runs: a new path, or a dgq-results file (a trace,
// an eval file or any other file there is the user's, and is not rewritten as results); a
// device, FIFO or socket is refused (output/partial_file.hpp). add_runs and OutputLock check it.
void require_results_output(const std::string& path);

// Adds runs to PATH without ever leaving PATH half-written: writes PATH.partial with the
// complete runs of PATH (if any) and the new runs (replacing same-name runs only when
// `replace`, otherwise a complete same-name run is an error), then renames it to PATH.
// Incomplete runs of PATH are dropped.
void add_runs(const std::string& path, const std::vector<RunResult>& runs, bool replace);

// Names of the links in a group, in name order.
std::vector<std::string> child_names(hid_t group, const std::string& context);
RunListing list_runs_in(hid_t file, const std::string& path);
// Root attributes of a results file: format = "dgq-results", version = 1.
void write_results_root(hid_t file);
// add_runs for any kind of run: PATH.partial gets PATH's complete runs (except those named
// in new_names, which must not be complete there unless `replace`), then write_new(file)
// writes the new run groups (each with `complete` = 1 last); renamed to PATH once closed.
// PATH.partial is a byte copy of PATH when this process wrote PATH and nothing is replaced
// (h5::is_written_here): a sweep's pass costs a copy, not a rewrite of every earlier run.
void add_run_groups(const std::string& path, const std::vector<std::string>& new_names, bool replace,
                    const std::function<void(hid_t file)>& write_new);
// How many times this process has written a results file from scratch, copying each earlier
// run (tests: a file of this process's own is appended to instead).
std::size_t results_files_rewritten();

// An exclusive lock on a results file for the whole of a replay or sweep: flock() on
// OUTPUT.lock, taken at the start. A second process writing the same output fails at once
// with "OUTPUT: in use by another dgq process"; an output folder that is not writable, and an
// output that may not receive runs (require_results_output), fail here too, before any work.
// A symbolic link's target is locked (TARGET.lock), whichever link names it. The lock file is
// removed on release only when this process created it (docs/replay.md).
class OutputLock {
 public:
  explicit OutputLock(const std::string& output);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace dgq::sim

#pragma once
// Results files of `dgq replay` / `dgq sweep` (docs/results-format.md): one HDF5 file with
// one group per run, /runs/<name>, whose attribute `complete` = 1 is written last. A run
// without it is treated as absent everywhere (listing, resume, merge).
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/metrics.hpp"
#include "dgq/sim/provenance.hpp"
#include "dgq/sim/replay.hpp"

namespace dgq::sim {

inline constexpr const char* kResultsFormat = "dgq-results";
inline constexpr int kResultsVersion = 1;

// One aggregated metric of a run: over everything, and per replayed layer.
struct MetricSummary {
  std::string name;  // e.g. "k_snr_db", "attn_kl", "clean_kl", "noise_mass_hat"
  Summary overall;
  std::vector<Summary> per_layer;
};

struct RunSummary {
  std::uint64_t k_bytes = 0, v_bytes = 0, original_bytes = 0;  // over all replayed units
  double bits_per_element = 0;  // 8 * (K + V bytes) / (K + V elements)
  double ratio = 0;             // original bytes / compressed bytes
  double mean_segments = 0;     // segments per head, mean over K and V units (0: no segmentation)
  std::vector<MetricSummary> metrics;
  const MetricSummary* find(const std::string& name) const;
};

RunSummary summarize_run(const RunResult& run);

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

// Joins results files into OUT (written through OUT.partial). Every input must be of one kind:
// dgq-results (replay, sweep), dgq-eval or dgq-passkey-results (merge_scheme_runs.hpp: one
// configuration, runs renumbered, each configuration once), else InputError naming the file.
// dgq-results: complete runs are copied; incomplete ones are skipped. A name present in several
// inputs must have identical contents (attributes and datasets), else dgq::InputError names the
// run and the difference.
// Every complete run must record one dgq version (docs/results-format.md, "Provenance"), else
// InputError "B: run Y was written by dgq VB (config HB), A: run X by dgq VA (config HA);
// merge runs of one dgq version or pass --allow-mixed-versions" before OUT is created;
// allow_mixed_versions copies them as they are, each run keeping its own version.
// OUT may be new or one of the inputs (its runs are kept); any other existing OUT is refused
// (ParameterError) unless `force`. No run to keep is an InputError: nothing is written.
struct MergeReport {
  std::size_t copied = 0, identical_duplicates = 0, skipped_incomplete = 0;
};
MergeReport merge_results(const std::string& out, const std::vector<std::string>& inputs,
                          bool allow_mixed_versions = false, bool force = false);

// Compares two run groups in two files; empty string if identical, else what differs.
std::string compare_runs(const std::string& path_a, const std::string& path_b, const std::string& name);

}  // namespace dgq::sim

namespace dgq::sim {
// JSON summary of runs (docs/results-format.md, "JSON summary"), written through PATH.partial.
// Non-finite numbers are written as the strings "Infinity", "-Infinity", "NaN".
void write_json_summary(const std::string& path, const std::vector<RunResult>& runs);
}  // namespace dgq::sim

namespace dgq::sim {
// The console table: one row per run (bits/elem, ratio, K/V SNR, KL mean/p95, output error
// mean/p95, top-8 recall, segments per head).
std::string format_run_table(const std::vector<RunResult>& runs);
}  // namespace dgq::sim

namespace dgq::sim {
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

// libFuzzer target: results files (docs/results-format.md) as `dgq merge` reads them, on an
// HDF5 file image in memory: the run listing, the deep comparison of every complete run with
// itself (the duplicate check) and the copy of every complete run into an in-memory file; and
// as `dgq export` reads them (every layout: replay, eval sweep, dgq eval, passkey).
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/export/export.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "results/run_groups.hpp"

namespace {
dgq::sim::h5::Handle memory_file() {
  dgq::sim::h5::Handle fapl(H5Pcreate(H5P_FILE_ACCESS), dgq::sim::h5::Handle::Kind::plist);
  H5Pset_fapl_core(fapl.get(), 1 << 16, false);
  return {H5Fcreate("fuzz-merged.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), dgq::sim::h5::Handle::Kind::file};
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  namespace sim = dgq::sim;
  const char* name = "fuzz-results.h5";
  sim::h5::ScopedFileImage image(name, data, size);
  try {
    std::ostringstream table;
    (void)sim::export_results(name, sim::ExportFormat::csv, table);
  } catch (const dgq::Error&) {}
  try {
    sim::h5::Handle file = sim::h5::open_file_readonly(name);
    const sim::RunListing listing = sim::list_runs_in(file.get(), name);
    if (listing.complete.empty()) return 0;
    sim::h5::Handle runs = sim::h5::open_group(file.get(), "runs", name);
    sim::h5::Handle merged = memory_file();
    sim::h5::Handle merged_runs = sim::h5::create_group(merged.get(), "runs", "fuzz-merged.h5");
    for (const std::string& run : listing.complete) {
      (void)sim::compare_runs(name, name, run);
      sim::copy_run_group(runs.get(), merged_runs.get(), run, name);
    }
  } catch (const dgq::Error&) {}
  return 0;
}

// libFuzzer target: the trace reader (docs/trace-format.md) on an HDF5 file image in memory.
// Every layer is read and checked; dgq::Error is the expected outcome of a bad file, anything
// else (a crash, a sanitizer report, std::bad_alloc, a hang) is a finding.
#include <cstddef>
#include <cstdint>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  const char* name = "fuzz-trace.h5";
  dgq::sim::h5::ScopedFileImage image(name, data, size);
  try {
    const dgq::sim::TraceReader reader(name);
    for (int layer = 0; layer < reader.meta().num_layers; ++layer) (void)reader.read_layer(layer);
  } catch (const dgq::Error&) {}
  return 0;
}

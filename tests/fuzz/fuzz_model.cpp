// libFuzzer target: the model-file reader of `dgq eval --model` (docs/model-format.md) on an
// HDF5 file image in memory: every attribute and every tensor is read and checked, as load_model
// does before the runner sees a weight.
#include <cstddef>
#include <cstdint>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/model/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  const char* name = "fuzz-model.h5";
  dgq::sim::h5::ScopedFileImage image(name, data, size);
  try {
    (void)dgq::sim::load_model(name);
  } catch (const dgq::Error&) {}
  return 0;
}

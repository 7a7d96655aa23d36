// libFuzzer target: the token-file reader of `dgq eval --text` (docs/eval.md, "dgq-tokens") on
// an HDF5 file image in memory.
#include <cstddef>
#include <cstdint>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/model/tokens.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  const char* name = "fuzz-tokens.h5";
  dgq::sim::h5::ScopedFileImage image(name, data, size);
  try {
    (void)dgq::sim::read_token_file(name);
  } catch (const dgq::Error&) {}
  return 0;
}

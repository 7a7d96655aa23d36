// libFuzzer target: the compressed-file reader and decoder (docs/compressed-format.md), i.e.
// `dgq decompress` without the output file, on an HDF5 file image in memory.
#include <cstddef>
#include <cstdint>

#include "compressed/decompress_layer.hpp"
#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  const char* name = "fuzz-compressed.h5";
  dgq::sim::h5::ScopedFileImage image(name, data, size);
  try {
    const dgq::sim::CompressedReader reader(name);
    const auto scheme = dgq::make_scheme(reader.scheme());
    for (int layer = 0; layer < reader.meta().num_layers; ++layer)
      (void)dgq::sim::decompress_layer(reader, *scheme, layer, 1);
  } catch (const dgq::Error&) {}
  return 0;
}

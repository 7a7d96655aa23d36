// libFuzzer target: the base-logits reader of `dgq eval --base-logits` (docs/eval.md) on an
// HDF5 file image in memory, as run_eval uses it: open and check against the run, then the
// logits of every chunk.
//
// run_eval knows the run's shape from the model and the token file; here it is the shape of the
// seed run (tests/fuzz/corpus/make_seeds.sh: `dgq eval --ctx 8` over 24 tokens of a 1-layer model
// with a 16-token vocabulary). The run identity is taken from the input itself, so that mutated
// files get past the identity check as a file written for that run would.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "results/base_logits_file.hpp"

namespace {
constexpr std::int64_t kChunks = 3, kLayers = 1, kRowsPerChunk = 3, kVocab = 16;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  namespace sim = dgq::sim;
  const char* name = "fuzz-base-logits.h5";
  sim::h5::ScopedFileImage image(name, data, size);
  try {
    std::string identity;
    {
      const sim::h5::Handle file = sim::h5::open_file_readonly(name);
      identity = sim::h5::read_string_attribute(file.get(), "run_identity", name);
    }
    const sim::BaseLogitsReader reader(name, identity, kChunks, kLayers);
    (void)sim::read_provenance_attributes(reader.file(), name);  // as dgq eval does before reusing it
    for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) (void)reader.logits(chunk, kRowsPerChunk, kVocab);
  } catch (const dgq::Error&) {}
  return 0;
}

// libFuzzer target: the GGUF reader of `dgq eval --model FILE.gguf` (sim/model/src/gguf/gguf_file.cpp,
// gguf_model.cpp) on a file image in memory: the header, the metadata, the model's settings and
// every tensor are read and checked, as load_model does before the runner sees a weight.
#include <cstddef>
#include <cstdint>

#include "cpu_budget.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "model_sources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dgq::fuzz::CpuBudget budget;
  try {
    const dgq::sim::gguf::File file("fuzz-model.gguf", data, size);
    (void)dgq::sim::model_from_gguf(file);
  } catch (const dgq::Error&) {}
  return 0;
}

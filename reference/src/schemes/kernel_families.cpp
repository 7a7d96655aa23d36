// kernel_families (dgq/kernels/families.hpp): the families parameterised by a kernel table. A
// family that gains a fast path adds its line here (docs/adding-a-scheme.md).
#include "schemes/kernel_families.hpp"

namespace dgq {

bool register_scheme_families(const std::vector<SchemeFamily>& entries) {
  for (const SchemeFamily& f : entries) register_scheme_family(f);
  return true;
}

std::vector<SchemeFamily> kernels::kernel_families(const CpuKernels& k, Device device) {
  std::vector<SchemeFamily> all;
  for (auto* family :
       {schemes::dgq_families, schemes::dgq2_families, schemes::q8_0_families, schemes::ggml_block_families,
        schemes::group64_families, schemes::int8_token_families, schemes::fp8_e4m3_families, schemes::kivi_families,
        schemes::turboquant_families, schemes::dgq3_families}) {
    for (SchemeFamily& f : family(k, device)) all.push_back(std::move(f));
  }
  return all;
}

}  // namespace dgq

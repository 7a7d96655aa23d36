#pragma once
// dgq_decode over codes the caller keeps elsewhere (defined in decode.cpp, next to this
// header): the dgq Scheme decodes straight from its "codes" part instead of copying 1 byte per
// element into a DgqV1Encoded first.
#include <cstdint>

#include "dgq/dgq.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/tensor.hpp"

namespace dgq::detail {

// The same output and errors as dgq_decode(enc, out) where enc is `header` with its codes
// set to codes[0 .. tokens*channels). header.codes is ignored (leave it empty).
void dgq_decode_codes(const kernels::CpuKernels& k, const DgqV1Encoded& header, const std::int8_t* codes,
                      MutTensor out);

}  // namespace dgq::detail

#pragma once
// dgq2's direct encode path (the fast CPU implementation's): the input, or its rotated rows
// rounded to the input dtype, read row by row through a kernel table, with no fp32 copy of the
// tensor. Gives the bytes and errors of the rules path of dgq2_scheme.cpp (the reference's);
// tests/reference/test_scheme_conformance.cpp compares the two registrations of dgq2.
#include <string>

#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/scheme.hpp"
#include "schemes/dgq2/params.hpp"

namespace dgq::schemes::dgq2 {

// compress() of a scheme with parameters p (already for_role(role)) and canonical spec `spec`;
// rotated: null, or the quantized rows of x rotated and rounded to x.dtype (x checked finite).
Compressed compress_direct(const kernels::CpuKernels& k, const Params& p, const std::string& spec, ConstTensor x,
                           TensorRole role, const ConstTensor* rotated);

}  // namespace dgq::schemes::dgq2

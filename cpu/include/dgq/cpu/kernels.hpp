#pragma once
// The fast CPU backend (cpu/, library dgq_cpu): its kernel table, the vectorized twin of the
// reference's (dgq/kernels/cpu_kernels.hpp). Linking dgq_cpu registers every family that has
// a fast path for Device::cpu and makes this table kernels_for(Device::cpu).
#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::cpu {

// Each entry is the vectorized function where this build has the ISA extension it needs
// (AVX2, F16C, FMA: see cpu/src/fast_kernels.cpp), else the reference's. name is "avx2" when
// DGQ v1's row loops are vectorized, "reference" otherwise (dgq-bench reports it).
const kernels::CpuKernels& fast_kernels();

}  // namespace dgq::cpu

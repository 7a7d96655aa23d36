#pragma once
// The families of reference/ whose Scheme computes through a kernel table
// (dgq/kernels/cpu_kernels.hpp): each file defines its function, registers what it returns for
// Device::reference with the reference's table, and kernel_families.cpp hands all of them to
// cpu/ (dgq/kernels/families.hpp).
#include <vector>

#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/kernels/families.hpp"
#include "dgq/registry.hpp"

namespace dgq::schemes {

std::vector<SchemeFamily> dgq_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> dgq2_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> q8_0_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> ggml_block_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> group64_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> int8_token_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> fp8_e4m3_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> kivi_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> turboquant_families(const kernels::CpuKernels& k, Device device);
std::vector<SchemeFamily> dgq3_families(const kernels::CpuKernels& k, Device device);

}  // namespace dgq::schemes

#pragma once
// How cpu/ registers its families without a copy of their Scheme classes: the reference hands
// out the registry entries of every family that computes through a kernel table, made with the
// table the caller passes. The reference registers them with reference_kernels() for
// Device::reference; cpu/ with its fast table for Device::cpu (cpu/src/register_families.cpp).
// Same parameters, summary, traits and error messages on both devices by construction.
#include <vector>

#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"

namespace dgq::kernels {

// The entries for `device`, computing with k (k must outlive the program: a static table).
// For Device::reference every entry the files register; otherwise only the families whose
// table entries (or, for dgq2, whose encode path) differ from the reference's.
std::vector<SchemeFamily> kernel_families(const CpuKernels& k, Device device);

}  // namespace dgq::kernels

namespace dgq {
// Registers each entry (register_scheme_family); returns true, for a static initializer.
bool register_scheme_families(const std::vector<SchemeFamily>& entries);
}  // namespace dgq

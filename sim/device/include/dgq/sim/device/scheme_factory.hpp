#pragma once
// The schemes a command runs, made for the device it names (--device, docs/cli.md): every
// command and sweep makes its schemes here, so that a device is parsed and refused one way. The
// one library of the simulator that knows whether this build has CUDA.
#include <memory>
#include <string_view>

#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"

namespace dgq::sim {

// "cpu" | "reference" | "cuda" (device_name's words); ParameterError naming --device otherwise.
Device parse_device(std::string_view name);

// make_scheme(spec, device): Device::cpu a family's fast CPU path where it has one (else its
// reference), Device::reference every family's literal reference, Device::cuda the family's CUDA
// implementation. The spec is checked on the CPU first, so that a bad spec is reported alike on
// every device. Device::cuda throws dgq::Error when this build has no CUDA or no device is
// usable, and refuses a family without a CUDA implementation rather than running it on the CPU:
// results record the device they were asked for.
std::unique_ptr<Scheme> make_device_scheme(std::string_view spec, Device device);

}  // namespace dgq::sim

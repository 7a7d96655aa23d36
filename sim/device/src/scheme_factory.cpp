// Schemes on a device (scheme_factory.hpp): the CPU, the literal reference, or CUDA.
#include "dgq/sim/device/scheme_factory.hpp"

#include <string>

#include "dgq/errors.hpp"

#ifdef DGQ_WITH_CUDA
#include "dgq/cuda/dgq_cuda.hpp"
#endif

namespace dgq::sim {

Device parse_device(std::string_view name) {
  for (const Device d : {Device::cpu, Device::cuda, Device::reference})
    if (name == device_name(d)) return d;
  throw ParameterError("--device: '" + std::string(name) + "' is not one of cpu, reference, cuda");
}

std::unique_ptr<Scheme> make_device_scheme(std::string_view spec, Device device) {
  if (device != Device::cuda) return make_scheme(spec, device);
  (void)make_scheme(spec);  // a bad spec is reported as on the CPU, before the device
#ifdef DGQ_WITH_CUDA
  std::unique_ptr<Scheme> gpu = make_scheme(spec, Device::cuda);
  std::string why;
  if (!cuda::device_available(&why)) throw Error("--device cuda: no usable CUDA device (" + why + ")");
  return gpu;
#else
  // Without CUDA no family has a CUDA implementation to ask for, whatever it is called.
  throw Error("--device cuda: this dgq was built without CUDA (configure with -DDGQ_CUDA=ON)");
#endif
}

}  // namespace dgq::sim

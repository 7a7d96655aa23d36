// Scheme construction for replays: the CPU (fast paths where a family has them), the literal
// reference, or the CUDA implementation of DGQ.
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/sim/replay.hpp"

#ifdef DGQ_WITH_CUDA
#include "dgq/cuda/dgq_cuda.hpp"
#endif

namespace dgq::sim {

ReplayDevice parse_replay_device(std::string_view s) {
  if (s == "cpu") return ReplayDevice::cpu;
  if (s == "cuda") return ReplayDevice::cuda;
  if (s == "reference") return ReplayDevice::reference;
  throw ParameterError("--device: '" + std::string(s) + "' is not one of cpu, reference, cuda");
}

std::unique_ptr<Scheme> make_replay_scheme(std::string_view spec, ReplayDevice device) {
  if (device == ReplayDevice::cpu) return make_scheme(spec);
  if (device == ReplayDevice::reference) return make_scheme(spec, Device::reference);
#ifdef DGQ_WITH_CUDA
  // A family without a CUDA implementation is refused (make_scheme names the ones that have
  // one) rather than run on the CPU: results record the device they were asked for.
  (void)make_scheme(spec);  // a bad spec is reported as on the CPU, before the device
  std::unique_ptr<Scheme> gpu = make_scheme(spec, Device::cuda);
  std::string why;
  if (!cuda::device_available(&why)) throw Error("--device cuda: no usable CUDA device (" + why + ")");
  return gpu;
#else
  // Without CUDA no family has a CUDA implementation to ask for, whatever it is called.
  (void)make_scheme(spec);  // the spec is checked before the device, as with CUDA
  throw Error("--device cuda: this dgq was built without CUDA (configure with -DDGQ_CUDA=ON)");
#endif
}

}  // namespace dgq::sim

// Scheme construction for replays: the CPU reference, or the CUDA implementation of DGQ.
#include "dgq/errors.hpp"
#include "dgq/sim/replay.hpp"

#ifdef DGQ_WITH_CUDA
#include "dgq/cuda/dgq_cuda.hpp"
#endif

namespace dgq::sim {

ReplayDevice parse_replay_device(std::string_view s) {
  if (s == "cpu") return ReplayDevice::cpu;
  if (s == "cuda") return ReplayDevice::cuda;
  throw ParameterError("--device: '" + std::string(s) + "' is not one of cpu, cuda");
}

std::unique_ptr<Scheme> make_replay_scheme(std::string_view spec, ReplayDevice device) {
  std::unique_ptr<Scheme> cpu = make_scheme(spec);  // validates the spec on every build
  if (device == ReplayDevice::cpu || cpu->family() != "dgq") return cpu;
#ifdef DGQ_WITH_CUDA
  std::string why;
  if (!cuda::device_available(&why)) throw Error("--device cuda: no usable CUDA device (" + why + ")");
  return cuda::make_cuda_scheme(cpu->spec());
#else
  throw Error("--device cuda: this dgq was built without CUDA (configure with -DDGQ_CUDA=ON)");
#endif
}

}  // namespace dgq::sim

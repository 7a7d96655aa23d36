// Device side of test_gpu_conversions.cpp: the kernels' fp16 loads and stores
// (cuda/src/kernels/device_common.cuh, Storage<f16>) applied to every input on the device.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "conversion_kernels.hpp"
#include "device_common.cuh"

namespace dgq::gpu_test {
namespace {

using cuda::detail::Storage;

__global__ void widen_kernel(const std::uint16_t* in, float* out, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Storage<DType::f16>::load(in[i]);
}

__global__ void narrow_kernel(const float* in, std::uint16_t* out, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Storage<DType::f16>::store(in[i]);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class In, class Out, class Launch>
std::vector<Out> run_on_device(const std::vector<In>& in, Launch launch) {
  const auto n = static_cast<std::int64_t>(in.size());
  std::vector<Out> out(in.size());
  In* d_in = nullptr;
  Out* d_out = nullptr;
  check(cudaMalloc(&d_in, in.size() * sizeof(In)), "cudaMalloc");
  check(cudaMalloc(&d_out, out.size() * sizeof(Out)), "cudaMalloc");
  check(cudaMemcpy(d_in, in.data(), in.size() * sizeof(In), cudaMemcpyHostToDevice), "cudaMemcpy");
  constexpr int kThreads = 256;
  launch(static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, d_in, d_out, n);
  check(cudaGetLastError(), "conversion kernel");
  check(cudaMemcpy(out.data(), d_out, out.size() * sizeof(Out), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_in);
  cudaFree(d_out);
  return out;
}

}  // namespace

std::vector<float> widen_halves_on_device(const std::vector<std::uint16_t>& halves) {
  return run_on_device<std::uint16_t, float>(halves, [](unsigned g, int b, const std::uint16_t* i, float* o,
                                                        std::int64_t n) { widen_kernel<<<g, b>>>(i, o, n); });
}

std::vector<std::uint16_t> narrow_floats_on_device(const std::vector<float>& floats) {
  return run_on_device<float, std::uint16_t>(floats, [](unsigned g, int b, const float* i, std::uint16_t* o,
                                                        std::int64_t n) { narrow_kernel<<<g, b>>>(i, o, n); });
}

}  // namespace dgq::gpu_test

#pragma once
// The CUDA kernels' fp16 conversions run on the device over given inputs
// (tests/gpu/conversion_kernels.cu), for test_gpu_conversions.cpp.
#include <cstdint>
#include <vector>

namespace dgq::gpu_test {

std::vector<float> widen_halves_on_device(const std::vector<std::uint16_t>& halves);
std::vector<std::uint16_t> narrow_floats_on_device(const std::vector<float>& floats);

}  // namespace dgq::gpu_test

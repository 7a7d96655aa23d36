#pragma once
// Every CUDA runtime call goes through check_cuda: a failure becomes a dgq::Error carrying
// cudaGetErrorString, never silent garbage.
#include <cuda_runtime_api.h>

#include <string>

#include "dgq/errors.hpp"

namespace dgq::cuda {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
  }
}

// Launch errors (bad configuration) are only visible through cudaGetLastError.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace dgq::cuda

#include <cuda_runtime_api.h>

#include <utility>

#include "cuda_check.hpp"
#include "dgq/cuda/dgq_cuda.hpp"

namespace dgq::cuda {

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // destructor: nothing useful to do with a failure here
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return;
  if (ptr_) {
    check_cuda(cudaFree(ptr_), "cudaFree");
    ptr_ = nullptr;
    capacity_ = 0;
  }
  // Round up so that the vectorised kernels may always touch whole 16-byte words.
  const std::size_t rounded = (bytes + 255) / 256 * 256;
  check_cuda(cudaMalloc(&ptr_, rounded), "cudaMalloc");
  capacity_ = rounded;
}

}  // namespace dgq::cuda

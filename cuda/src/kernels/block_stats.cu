// Rule 2 on the GPU: one thread per (unit, block of win tokens). The block mean is the
// spec's sequential fp32 sum in increasing t divided by n_b, so a thread walks its block in
// order; the same thread folds the tokens' min/max into block min/max for rule 6.
// Traffic: 12 bytes per token read, 12 bytes per block written (tiny next to the tensor).
#include "../cuda_check.hpp"
#include "device_common.cuh"
#include "kernels.hpp"

namespace dgq::cuda::detail {
namespace {

constexpr int kThreads = 256;

__global__ void block_stats_kernel(const float* __restrict__ var, const float* __restrict__ tmin,
                                   const float* __restrict__ tmax, std::int64_t units, std::int64_t tokens, int win,
                                   std::int64_t blocks, float* __restrict__ bmean, float* __restrict__ bmin,
                                   float* __restrict__ bmax) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= units * blocks) return;
  const std::int64_t unit = i / blocks;
  const std::int64_t first = (i % blocks) * win;
  const std::int64_t end = first + win < tokens ? first + win : tokens;
  const std::int64_t base = unit * tokens;
  float sum = 0.0f;
  float lo = INFINITY, hi = -INFINITY;
  for (std::int64_t t = first; t < end; ++t) {
    sum = sum + var[base + t];
    lo = fminf(lo, tmin[base + t]);
    hi = fmaxf(hi, tmax[base + t]);
  }
  bmean[i] = sum / static_cast<float>(end - first);
  bmin[i] = lo;
  bmax[i] = hi;
}

}  // namespace

void launch_block_stats(const float* var, const float* tmin, const float* tmax, const DeviceShape& shape, int win,
                        float* bmean, float* bmin, float* bmax, cudaStream_t stream) {
  const std::int64_t blocks = (shape.tokens + win - 1) / win;
  const std::int64_t items = shape.units * blocks;
  if (items == 0) return;
  block_stats_kernel<<<grid_for(items, kThreads), kThreads, 0, stream>>>(var, tmin, tmax, shape.units, shape.tokens,
                                                                         win, blocks, bmean, bmin, bmax);
  check_launch("block_stats_kernel");
}

}  // namespace dgq::cuda::detail

#pragma once
// DGQ v3 rule W5: a token is coded as its difference from the mean of the previous `window`
// tokens as the decoder reconstructs them (in the rotated basis), so the prediction costs no
// byte and the error of one token never carries into the next. Keys share a large slowly
// rotating component across tokens (channel offsets under RoPE); a per-token code spends its
// range on it, the difference does not.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dgq/kernels/cpu_kernels.hpp"

namespace dgq::schemes::dgq3 {

class WindowMean {
 public:
  WindowMean(const kernels::CpuKernels& k, std::int64_t window, std::int64_t channels)
      : k_(k), window_(window), channels_(channels), rows_(static_cast<std::size_t>(window * channels), 0.0f) {}

  // mean[c] = (sum of the held rows' channel c, oldest first, fp32) / held; 0 with none held
  // (the table's window_mean, whose rule symmetric_codes.hpp writes out).
  void mean(float* out) const { k_.window_mean(rows_.data(), window_, count_, channels_, out); }

  void push(const float* row) {
    std::copy(row, row + channels_, rows_.data() + (count_ % window_) * channels_);
    ++count_;
  }

 private:
  const kernels::CpuKernels& k_;
  std::int64_t window_, channels_, count_ = 0;
  std::vector<float> rows_;
};

}  // namespace dgq::schemes::dgq3

#pragma once
// DGQ v3 rule W5: a token is coded as its difference from the mean of the previous `window`
// tokens as the decoder reconstructs them (in the rotated basis), so the prediction costs no
// byte and the error of one token never carries into the next. Keys share a large slowly
// rotating component across tokens (channel offsets under RoPE); a per-token code spends its
// range on it, the difference does not.
#include <cstdint>
#include <vector>

namespace dgq::schemes::dgq3 {

class WindowMean {
 public:
  WindowMean(std::int64_t window, std::int64_t channels)
      : window_(window), channels_(channels), rows_(static_cast<std::size_t>(window * channels), 0.0f) {}

  // mean[c] = (sum of the held rows' channel c, oldest first, fp32) / held; 0 with none held.
  void mean(float* out) const {
    const std::int64_t held = count_ < window_ ? count_ : window_;
    for (std::int64_t c = 0; c < channels_; ++c) out[c] = 0.0f;
    if (held == 0) return;
    const std::int64_t oldest = count_ - held;
    for (std::int64_t j = oldest; j < count_; ++j) {
      const float* r = rows_.data() + (j % window_) * channels_;
      for (std::int64_t c = 0; c < channels_; ++c) out[c] = out[c] + r[c];
    }
    const auto n = static_cast<float>(held);
    for (std::int64_t c = 0; c < channels_; ++c) out[c] = out[c] / n;
  }

  void push(const float* row) {
    float* r = rows_.data() + (count_ % window_) * channels_;
    for (std::int64_t c = 0; c < channels_; ++c) r[c] = row[c];
    ++count_;
  }

 private:
  std::int64_t window_, channels_, count_ = 0;
  std::vector<float> rows_;
};

}  // namespace dgq::schemes::dgq3

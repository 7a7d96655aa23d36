// KVarN's Sinkhorn-like variance normalisation (docs/spec.md "KVarN", rule N2), written out in
// the order the spec states, one tile at a time.
#include "dgq/schemes/sinkhorn_normalisation.hpp"

#include <algorithm>
#include <cmath>

namespace dgq::schemes {
namespace {

// The source's clamps (sinkhorn.py): a pass's standard deviation is taken in [1e-3, 1e3] and
// the accumulated log-scale in [-0.3, 10]; as scales, [exp(-0.3), exp(10)] rounded to fp32
// (0x3f3da643 = 0.7408182024..., 0x46ac14ee = 22026.4648...).
constexpr float kSinkhornStdMin = 1e-3f;
constexpr float kSinkhornStdMax = 1e3f;
constexpr float kSinkhornScaleMin = 0.740818202495574951171875f;
constexpr float kSinkhornScaleMax = 22026.46484375f;
constexpr float kSinkhornImbalanceFloor = 1e-8f;

float sinkhorn_clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

// The tile with the current scales applied, into cur.
void sinkhorn_apply_into(const float* tile, std::int64_t rows, std::int64_t cols, const SinkhornScales& s,
                         std::vector<float>& cur) {
  cur.resize(static_cast<std::size_t>(rows * cols));
  sinkhorn_apply(tile, rows, cols, s, cur.data());
}

}  // namespace

float kvarn_sample_std(const float* v, std::int64_t n, std::int64_t stride) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += v[i * stride];
  const float mean = sum / static_cast<float>(n);
  float acc = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float d = v[i * stride] - mean;
    acc = std::fma(d, d, acc);
  }
  return std::sqrt(acc / static_cast<float>(n - 1));
}

float sinkhorn_imbalance(const float* tile, std::int64_t rows, std::int64_t cols) {
  float col_max = 0.0f, col_min = INFINITY, row_max = 0.0f, row_min = INFINITY;
  for (std::int64_t c = 0; c < cols; ++c) {
    const float s = kvarn_sample_std(tile + c, rows, cols);
    col_max = std::max(col_max, s);
    col_min = std::min(col_min, s);
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float s = kvarn_sample_std(tile + r * cols, cols, 1);
    row_max = std::max(row_max, s);
    row_min = std::min(row_min, s);
  }
  return col_max / std::max(col_min, kSinkhornImbalanceFloor) + row_max / std::max(row_min, kSinkhornImbalanceFloor);
}

void sinkhorn_apply(const float* tile, std::int64_t rows, std::int64_t cols, const SinkhornScales& s, float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = tile[r * cols + c] / s.col[c] / s.row[r];
  }
}

SinkhornScales sinkhorn_normalise(const float* tile, std::int64_t rows, std::int64_t cols, int iterations) {
  SinkhornScales s{std::vector<float>(static_cast<std::size_t>(cols), 1.0f),
                   std::vector<float>(static_cast<std::size_t>(rows), 1.0f)};
  std::vector<float> cur(tile, tile + rows * cols);
  SinkhornScales best = s;
  float best_imbalance = sinkhorn_imbalance(cur.data(), rows, cols);
  for (int it = 0; it < iterations; ++it) {
    for (std::int64_t c = 0; c < cols; ++c) {
      s.col[c] = sinkhorn_clamp(
          s.col[c] * sinkhorn_clamp(kvarn_sample_std(cur.data() + c, rows, cols), kSinkhornStdMin, kSinkhornStdMax),
          kSinkhornScaleMin, kSinkhornScaleMax);
    }
    sinkhorn_apply_into(tile, rows, cols, s, cur);
    for (std::int64_t r = 0; r < rows; ++r) {
      s.row[r] = sinkhorn_clamp(
          s.row[r] * sinkhorn_clamp(kvarn_sample_std(cur.data() + r * cols, cols, 1), kSinkhornStdMin, kSinkhornStdMax),
          kSinkhornScaleMin, kSinkhornScaleMax);
    }
    sinkhorn_apply_into(tile, rows, cols, s, cur);
    // `<=` as the source: among equally balanced iterates the later one is kept.
    const float imbalance = sinkhorn_imbalance(cur.data(), rows, cols);
    if (imbalance <= best_imbalance) {
      best_imbalance = imbalance;
      best = s;
    }
  }
  return best;
}

}  // namespace dgq::schemes

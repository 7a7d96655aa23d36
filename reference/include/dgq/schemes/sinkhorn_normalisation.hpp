#pragma once
// KVarN's variance normalisation (docs/spec.md "KVarN", rule N2): a Sinkhorn-like balancing of
// one R x C tile that alternates a column pass and a row pass, each dividing by the sample
// standard deviation, and keeps the scales of the best-balanced iterate. Source:
// vllm/model_executor/layers/quantization/kvarn/sinkhorn.py (variance_normalize), which works in
// log space; here the same clamps are applied to the scales themselves (exp is monotone), so no
// log or exp is evaluated and the bits do not depend on a C library.
#include <cstdint>
#include <vector>

namespace dgq::schemes {

struct SinkhornScales {
  std::vector<float> col;  // [C]: the divisor of every column
  std::vector<float> row;  // [R]: the divisor of every row
};

// Sample standard deviation of n >= 2 values read at v[0], v[stride], ...: mean = (sum in index
// order from +0) / n; var = (sum of (v - mean)^2 with fma, in index order) / (n - 1); sqrt.
float kvarn_sample_std(const float* v, std::int64_t n, std::int64_t stride);

// max(std of each column) / max(min(std of each column), 1e-8) plus the same over rows: 2 for
// a tile whose rows all share one spread and whose columns do too.
float sinkhorn_imbalance(const float* tile, std::int64_t rows, std::int64_t cols);

// The scales of rule N2 for tile (row-major, rows x cols, both >= 2, finite), after
// `iterations` column-then-row passes: the balanced tile is (tile[r][c] / col[c]) / row[r].
SinkhornScales sinkhorn_normalise(const float* tile, std::int64_t rows, std::int64_t cols, int iterations);

// out[r][c] = (tile[r][c] / s.col[c]) / s.row[r] (fp32, two correctly rounded divisions).
void sinkhorn_apply(const float* tile, std::int64_t rows, std::int64_t cols, const SinkhornScales& s, float* out);

}  // namespace dgq::schemes

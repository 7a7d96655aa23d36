// The row loops written exactly as docs/spec.md states them: the oracle for cpu/'s vectorized ones.
#include <cmath>
#include <cstring>

#include "dgq/element_rules.hpp"
#include "row_kernels.hpp"

namespace dgq::kernels::scalar {

void load_row(const void* src, DType dt, std::int64_t n, float* row) {
  const ConstTensor view{src, dt, 1, n};
  for (std::int64_t d = 0; d < n; ++d) row[d] = load_element(view, d);
}

float canonical_sum(const float* x, std::int64_t n) {
  float acc[rules::kCanonicalLanes];
  for (float& a : acc) a = 0.0f;
  for (std::int64_t d = 0; d < n; ++d)
    acc[d % rules::kCanonicalLanes] = rules::sum_step(acc[d % rules::kCanonicalLanes], x[d]);
  for (int s : rules::kCanonicalTree)
    for (int j = 0; j < s; ++j) acc[j] = acc[j] + acc[j + s];
  return acc[0];
}

float canonical_sum_of_squares(const float* x, std::int64_t n, float mean) {
  float acc[rules::kCanonicalLanes];
  for (float& a : acc) a = 0.0f;
  for (std::int64_t d = 0; d < n; ++d) {
    const float delta = x[d] - mean;
    acc[d % rules::kCanonicalLanes] = rules::square_step(acc[d % rules::kCanonicalLanes], delta);
  }
  for (int s : rules::kCanonicalTree)
    for (int j = 0; j < s; ++j) acc[j] = acc[j] + acc[j + s];
  return acc[0];
}

RowStats scan_row(const void* src, DType dt, std::int64_t n, float* row, float* lo, float* hi, RangeShape shape) {
  load_row(src, dt, n, row);
  RowStats st;
  for (std::int64_t d = 0; d < n; ++d) {
    if (!std::isfinite(row[d])) st.finite = false;
    const std::int64_t c = shape == RangeShape::per_channel ? d : 0;
    lo[c] = std::fmin(lo[c], row[d]);
    hi[c] = std::fmax(hi[c], row[d]);
  }
  if (!st.finite) return st;
  st.sum = canonical_sum(row, n);
  st.sum_squares = canonical_sum_of_squares(row, n, st.sum / static_cast<float>(n));
  return st;
}

std::int64_t scan_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, float* row, float* lo, float* hi,
                       RangeShape shape, RowStats* stats) {
  const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(dt);
  for (std::int64_t r = 0; r < rows; ++r) {
    const void* row_src = static_cast<const unsigned char*>(src) + static_cast<std::size_t>(r) * row_bytes;
    const RowStats st = scan_row(row_src, dt, n, row, lo, hi, shape);
    if (!st.finite) return r;
    stats[r] = st;
  }
  return rows;
}

void quantize_rows(const void* src, DType dt, std::int64_t rows, std::int64_t n, const float* lo, const float* inv,
                   std::int8_t* codes) {
  const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(dt);
  for (std::int64_t r = 0; r < rows; ++r)
    quantize_row(static_cast<const unsigned char*>(src) + static_cast<std::size_t>(r) * row_bytes, dt, n, lo, inv,
                 codes + r * n);
}

void quantize_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, std::int8_t* codes) {
  const ConstTensor view{src, dt, 1, n};
  for (std::int64_t d = 0; d < n; ++d) codes[d] = rules::quantize_code(load_element(view, d), lo[d], inv[d]);
}

void dequantize_row(const std::int8_t* codes, std::int64_t n, const float* lo, const float* scale, DType dt,
                    void* out) {
  const MutTensor view{out, dt, 1, n};
  for (std::int64_t d = 0; d < n; ++d) store_element(view, d, rules::dequantize_code(codes[d], lo[d], scale[d]));
}

}  // namespace dgq::kernels::scalar

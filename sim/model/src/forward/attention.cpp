// The forward pass's attention (forward_ops.hpp, attention): GQA, causal and sliding-window
// masks, and the causal cache's view (a query reads a key's raw row when the key was not final
// yet when the query's token was appended). Two arithmetics:
//
// - row_exact: one query at a time, scores by dot_fixed in key order, the softmax of the numpy
//   pass in tools/export-trace.py (double sum, terms below e^-80 dropped), values accumulated in
//   key order. What every row computes does not depend on the batch; it is the proof mode.
// - blocked: query blocks of kQueryBlock rows against key tiles of kKeyTile keys, with an online
//   softmax (running maximum and sum per row, the partial output rescaled when the maximum
//   grows: the flash-attention recurrence) and the core's prefill_softmax_exp. The score tile
//   stays in cache, so attention no longer streams a [rows][n_ctx] score matrix through memory
//   at long contexts.
//   Its order is fixed by the block and tile boundaries, so it does not depend on threads.
//   It differs from row_exact in the last bits (docs/eval.md gives the measured bound).
#include <algorithm>
#include <cmath>
#include <limits>

#include "dgq/attention_rules.hpp"
#include "dgq/sim/model/forward_profile.hpp"
#include "dgq/sim/model/gemm_library.hpp"
#include "forward/forward_ops.hpp"
#include "forward/softmax_exp.hpp"

namespace dgq::sim::forward {
namespace {

using AttentionMap = Eigen::Map<const RowMat>;

constexpr float kNegligibleLogit = -80.0f;  // as export_trace.py's SOFTMAX_NEGLIGIBLE_LOGIT
// Query rows per block, and keys per tile: a 64 x 256 fp32 score tile is 64 KiB.
constexpr std::int64_t kQueryBlock = 64;
constexpr std::int64_t kKeyTile = 256;
constexpr std::int64_t kAllStored = std::numeric_limits<std::int64_t>::max();

// Softmax of one score row over [lo, hi] in place (entries outside become 0), as the numpy pass.
void softmax_row_exact(float* row, std::int64_t count, std::int64_t lo, std::int64_t hi) {
  float peak = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = lo; j <= hi; ++j) peak = std::max(peak, row[j]);
  double sum = 0;
  for (std::int64_t j = 0; j < count; ++j) {
    if (j < lo || j > hi) {
      row[j] = 0.0f;
      continue;
    }
    const float shifted = row[j] - peak;
    row[j] = shifted < kNegligibleLogit ? 0.0f : std::exp(shifted);
    sum += row[j];
  }
  const float total = static_cast<float>(sum);
  for (std::int64_t j = lo; j <= hi; ++j) row[j] /= total;
}

// A key's row as the query at `position` reads it: the stored row, or under a causal view the
// raw row when the key was not final yet when that query's token was appended.
struct KeyReader {
  const AttentionKeys& keys;
  std::int64_t d, head;
  // The number of stored (final) keys the query at `position` reads; keys above are raw. With
  // no causal view, or when every visible key is final, position + 1 ("all stored").
  std::int64_t final_k(std::int64_t position) const {
    return split(keys.causal ? &keys.causal->final_k : nullptr, position);
  }
  std::int64_t final_v(std::int64_t position) const {
    return split(keys.causal ? &keys.causal->final_v : nullptr, position);
  }
  const float* k(std::int64_t j, std::int64_t split_k) const {
    return (j < split_k ? keys.k : keys.causal->raw_k.data()) + (head * keys.keys + j) * d;
  }
  const float* v(std::int64_t j, std::int64_t split_v) const {
    return (j < split_v ? keys.v : keys.causal->raw_v.data()) + (head * keys.keys + j) * d;
  }

 private:
  std::int64_t split(const std::vector<std::uint32_t>* f, std::int64_t position) const {
    if (f == nullptr) return position + 1;
    return std::min<std::int64_t>((*f)[static_cast<std::size_t>(head * keys.keys + position)], position + 1);
  }
};

std::int64_t first_visible(std::int64_t position, std::int64_t window) {
  return window > 0 ? std::max<std::int64_t>(0, position - window + 1) : 0;
}

// One query, row-exact: scores by dot_fixed in key order, the softmax, then the weighted sum
// of the values accumulated in key order.
void attend_row_exact(const float* q, std::int64_t position, std::int64_t window, const KeyReader& r,
                      std::vector<float>& scores, float* out) {
  const std::int64_t d = r.d, lo = first_visible(position, window);
  const std::int64_t sk = r.final_k(position), sv = r.final_v(position), n = position - lo + 1;
  scores.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = lo; j <= position; ++j) scores[static_cast<std::size_t>(j - lo)] = dot_fixed(q, r.k(j, sk), d);
  softmax_row_exact(scores.data(), n, 0, n - 1);
  std::fill(out, out + d, 0.0f);
  for (std::int64_t j = lo; j <= position; ++j) {
    const float p = scores[static_cast<std::size_t>(j - lo)];
    const float* v = r.v(j, sv);
    for (std::int64_t c = 0; c < d; ++c) out[c] += p * v[c];
  }
}

// ---- blocked ---------------------------------------------------------------------------------

// Per-thread scratch of the blocked path.
struct TileScratch {
  RowMat scores, acc, tile_k, tile_v;
  std::vector<float> max, sum;
};

// exp(row[j] - peak) for j in [lo, hi], 0 elsewhere, in place; returns the sum of the row in 8
// lanes (element j into lane j mod 8) and a fixed tree, whatever the vector width.
float exp_and_sum(float* row, std::int64_t count, std::int64_t lo, std::int64_t hi, float peak) {
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi + 1, row + count, 0.0f);
  std::int64_t j = lo;
#if defined(__AVX2__)
  const __m256 shift = _mm256_set1_ps(peak);
  for (; j + 8 <= hi + 1; j += 8)
    _mm256_storeu_ps(row + j, prefill_softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), shift)));
#endif
  for (; j <= hi; ++j) row[j] = attention_rules::prefill_softmax_exp(row[j] - peak);
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += row[i + l];
  for (int l = 0; i < count; ++i, ++l) lanes[l] += row[i];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// Keys t0..t0+n-1 as one [n][d] matrix: in place when they come from one source (the stored
// rows below the split, or the raw rows from it on), else copied row by row into `mixed`.
AttentionMap key_tile(const KeyReader& r, bool is_k, std::int64_t split, std::int64_t t0, std::int64_t n,
                      RowMat& mixed) {
  const auto row = [&](std::int64_t j) { return is_k ? r.k(j, split) : r.v(j, split); };
  if (t0 + n <= split || t0 >= split) return AttentionMap(row(t0), n, r.d);
  mixed.resize(n, r.d);
  for (std::int64_t j = 0; j < n; ++j) std::copy(row(t0 + j), row(t0 + j) + r.d, mixed.data() + j * r.d);
  return AttentionMap(mixed.data(), n, r.d);
}

// Query rows [r0, r1) of one head, which read the same keys (the same causal splits), against
// tiles of the keys they can see, with the online softmax.
void attend_block(const float* q, std::int64_t r0, std::int64_t r1, std::int64_t first_position, std::int64_t window,
                  const KeyReader& r, TileScratch& s, RowMat& out, std::int64_t out_col) {
  const std::int64_t d = r.d, rows = r1 - r0;
  const std::int64_t p_first = first_position + r0, p_last = first_position + r1 - 1;
  const std::int64_t k0 = first_visible(p_first, window), k_end = p_last + 1;
  std::int64_t sk = r.final_k(p_first), sv = r.final_v(p_first);
  if (sk > p_first) sk = kAllStored;  // every key a row of the block sees is stored
  if (sv > p_first) sv = kAllStored;
  const AttentionMap qb(q + r0 * d, rows, d);
  s.max.assign(static_cast<std::size_t>(rows), -std::numeric_limits<float>::infinity());
  s.sum.assign(static_cast<std::size_t>(rows), 0.0f);
  s.acc.setZero(rows, d);
  for (std::int64_t t0 = k0; t0 < k_end; t0 += kKeyTile) {
    const std::int64_t n = std::min(kKeyTile, k_end - t0);
    const AttentionMap kt = key_tile(r, true, sk, t0, n, s.tile_k);
    s.scores.resize(rows, n);
    tile_scores(qb.data(), rows, d, kt.data(), n, s.scores.data());
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t p = p_first + i;
      const std::int64_t lo = std::max(first_visible(p, window), t0) - t0, hi = std::min(p, t0 + n - 1) - t0;
      float* row = s.scores.data() + i * n;
      if (hi < lo) {  // the row sees no key of this tile
        std::fill(row, row + n, 0.0f);
        continue;
      }
      const float tile_peak = *std::max_element(row + lo, row + hi + 1);
      const auto at = static_cast<std::size_t>(i);
      const float peak = std::max(s.max[at], tile_peak);
      const float rescale = s.max[at] == -std::numeric_limits<float>::infinity()
                                ? 0.0f
                                : attention_rules::prefill_softmax_exp(s.max[at] - peak);
      s.sum[at] = s.sum[at] * rescale + exp_and_sum(row, n, lo, hi, peak);
      if (rescale != 1.0f) s.acc.row(i) *= rescale;
      s.max[at] = peak;
    }
    const AttentionMap vt = key_tile(r, false, sv, t0, n, s.tile_v);
    tile_accumulate(s.scores.data(), rows, n, vt.data(), d, s.acc.data());
  }
  for (std::int64_t i = 0; i < rows; ++i)
    out.block(r0 + i, out_col, 1, d) = s.acc.row(i) / s.sum[static_cast<std::size_t>(i)];
}

}  // namespace

RowMat attention(const std::vector<float>& q, std::int64_t tokens, std::int64_t first_position,
                 const AttentionKeys& keys, const ModelConfig& c, std::int64_t window, Arithmetic a) {
  const std::int64_t d = c.head_dim, group = c.num_q_heads / c.num_kv_heads;
  const ForwardPartTimer timer(ForwardPart::attention,
                               attention_flops(tokens, first_position, keys.keys, window, c.num_q_heads, d));
  const std::int64_t blocks = (tokens + kQueryBlock - 1) / kQueryBlock;
  RowMat out(tokens, c.q_rows());
#pragma omp parallel
  {
    TileScratch scratch;
    std::vector<float> row_scores;
#pragma omp for schedule(dynamic)
    for (std::int64_t task = 0; task < c.num_q_heads * blocks; ++task) {
      const std::int64_t h = task / blocks, b0 = (task % blocks) * kQueryBlock;
      const std::int64_t b1 = std::min(tokens, b0 + kQueryBlock);
      const KeyReader reader{keys, d, h / group};
      const float* qh = q.data() + h * tokens * d;
      if (a == Arithmetic::row_exact) {
        for (std::int64_t r = b0; r < b1; ++r)
          attend_row_exact(qh + r * d, first_position + r, window, reader, row_scores,
                           out.data() + r * c.q_rows() + h * d);
        continue;
      }
      // Runs of rows with the same causal splits ("all stored" counts as one value), so that
      // every block meets one key matrix.
      const auto signature = [&](std::int64_t r) {
        const std::int64_t p = first_position + r, sk = reader.final_k(p), sv = reader.final_v(p);
        return std::pair{sk > p ? -1 : sk, sv > p ? -1 : sv};
      };
      for (std::int64_t r0 = b0; r0 < b1;) {
        std::int64_t r1 = r0 + 1;
        while (r1 < b1 && signature(r1) == signature(r0)) ++r1;
        attend_block(qh, r0, r1, first_position, window, reader, scratch, out, h * d);
        r0 = r1;
      }
    }
  }
  return out;
}

}  // namespace dgq::sim::forward

// Per-token next-token scores against a base run, and their summary as llama.cpp's
// `llama-perplexity --kl-divergence` reports it (formulas in docs/eval.md). All in double.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/scores.hpp"
#include "dgq/sim/model/forward_profile.hpp"

namespace dgq::sim {
namespace {

// One row's statistics, its exponentials relative to its peak kept in `e` (e[i] = exp(x[i] -
// peak)) for the KL divergence. Eigen's vectorised double exp (a few ulp of libm's) and its
// vectorised sums: the scores of Gemma 3's 262,144-word vocabulary took 3 libm exps per logit
// before, a third of a Gemma 3 run at n_ctx 1024 (docs/benchmarks.md, runner profile). Every
// sum runs over arrays this function owns, so its grouping never depends on where the caller's
// logits lie in memory.
struct RowStats {
  double log_z = 0;  // log sum exp of the row
  double sum = 0;    // sum of e
  std::int64_t argmax = 0;
};

RowStats row_stats(const float* row, std::int64_t vocab, Eigen::ArrayXd& e) {
  std::int64_t best = 0;  // the first of equal maxima, as llama.cpp's top-1
  for (std::int64_t i = 1; i < vocab; ++i)
    if (row[i] > row[best]) best = i;
  const double peak = row[best];
  e = Eigen::Map<const Eigen::ArrayXf>(row, vocab).cast<double>() - peak;
  e = e.exp();
  const double sum = e.sum();
  return {peak + std::log(sum), sum, best};
}

// KL(base || q) of one row: sum p_b (log p_b - log p_q), with p_b = e_b / sum_b and
// log p_b - log p_q = (b - q) - (log_z_b - log_z_q).
double row_kld(const float* b, const float* q, std::int64_t vocab, const RowStats& sb, const Eigen::ArrayXd& e_b,
               const RowStats& sq, Eigen::ArrayXd& gap) {
  gap = Eigen::Map<const Eigen::ArrayXf>(b, vocab).cast<double>() -
        Eigen::Map<const Eigen::ArrayXf>(q, vocab).cast<double>();
  gap -= sb.log_z - sq.log_z;
  return (e_b * gap).sum() / sb.sum;
}

struct MeanVar {
  double mean = 0, var = 0;  // var: population variance
};
MeanVar mean_var(const std::vector<double>& v) {
  MeanVar m;
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size());
  return m;
}

}  // namespace

void TokenScores::append(const TokenScores& o) {
  nll.insert(nll.end(), o.nll.begin(), o.nll.end());
  kld.insert(kld.end(), o.kld.begin(), o.kld.end());
  p_target.insert(p_target.end(), o.p_target.begin(), o.p_target.end());
  same_top1.insert(same_top1.end(), o.same_top1.begin(), o.same_top1.end());
}

TokenScores score_tokens(std::span<const float> base_logits, std::span<const float> logits,
                         std::span<const std::int32_t> targets, std::int64_t vocab) {
  const auto rows = static_cast<std::int64_t>(targets.size());
  if (base_logits.size() != logits.size() || logits.size() != static_cast<std::size_t>(rows * vocab))
    throw InputError("score_tokens: logits sizes do not match rows x vocab");
  const ScoringTimer timer;
  TokenScores s;
  s.nll.resize(rows);
  s.kld.resize(rows);
  s.p_target.resize(rows);
  s.same_top1.resize(rows);
  // The base scored against itself (the base run's own NLL) has KL 0 exactly: one row's
  // statistics serve both sides.
  const bool against_itself = base_logits.data() == logits.data();
#pragma omp parallel
  {
    Eigen::ArrayXd e_b(vocab), e_q(vocab), gap(vocab);  // per thread, reused across rows
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* b = base_logits.data() + r * vocab;
      const float* q = logits.data() + r * vocab;
      const RowStats sb = row_stats(b, vocab, e_b);
      const RowStats sq = against_itself ? sb : row_stats(q, vocab, e_q);
      const std::int32_t t = targets[static_cast<std::size_t>(r)];
      s.nll[r] = sq.log_z - double(q[t]);
      s.kld[r] = against_itself ? 0.0 : row_kld(b, q, vocab, sb, e_b, sq, gap);
      s.p_target[r] = std::exp(-s.nll[r]);
      s.same_top1[r] = sb.argmax == sq.argmax;
    }
  }
  return s;
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = fraction * double(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - double(lo)) * (values[hi] - values[lo]);
}

EvalSummary summarize(const TokenScores& run, const TokenScores& base, const HeldBytes& held) {
  const std::size_t n = run.size();
  if (n < 2 || base.size() != n) throw InputError("summarize: need at least 2 scored tokens, same count as the base");
  EvalSummary s;
  s.tokens = static_cast<std::int64_t>(n);
  const double dof = double(n - 1);
  const MeanVar nll = mean_var(run.nll), nll_base = mean_var(base.nll);
  double cov = 0;
  for (std::size_t i = 0; i < n; ++i) cov += (run.nll[i] - nll.mean) * (base.nll[i] - nll_base.mean);
  cov /= double(n);
  s.ppl = std::exp(nll.mean);
  const double ppl_base = std::exp(nll_base.mean);
  s.ppl_stderr = s.ppl * std::sqrt(nll.var / dof);
  const double base_stderr = ppl_base * std::sqrt(nll_base.var / dof);
  s.dppl = s.ppl - ppl_base;
  // llama.cpp: the PPL difference's uncertainty with the covariance of the two runs' NLLs.
  s.dppl_stderr = std::sqrt(
      std::max(0.0, s.ppl_stderr * s.ppl_stderr + base_stderr * base_stderr - 2.0 * s.ppl * ppl_base * cov / dof));
  const MeanVar kld = mean_var(run.kld);
  s.kld_mean = kld.mean;
  s.kld_stderr = std::sqrt(kld.var / dof);
  s.kld_median = percentile(run.kld, 0.5);
  s.kld_p90 = percentile(run.kld, 0.9);
  s.kld_p99 = percentile(run.kld, 0.99);
  s.kld_max = *std::max_element(run.kld.begin(), run.kld.end());
  double dp2 = 0, same = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dp = run.p_target[i] - base.p_target[i];
    dp2 += dp * dp;
    same += run.same_top1[i];
  }
  s.rms_dp = std::sqrt(dp2 / double(n));
  s.same_top1 = same / double(n);
  s.bits_per_element = held.elements == 0 ? 0 : 8.0 * double(held.bytes) / double(held.elements);
  s.bits_averaged = held.elements_sum == 0 ? 0 : 8.0 * double(held.bytes_sum) / double(held.elements_sum);
  // K and V hold the same number of elements (one head_dim row each per token and head).
  const double role_elements = double(held.elements) / 2;
  const bool known = held.k_bytes >= 0 && role_elements > 0;
  s.bits_k = known ? 8.0 * double(held.k_bytes) / role_elements : std::nan("");
  s.bits_v = known ? 8.0 * double(held.bytes - static_cast<std::uint64_t>(held.k_bytes)) / role_elements : std::nan("");
  return s;
}

}  // namespace dgq::sim

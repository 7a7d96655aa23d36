// Per-token scores against a base run (dgq/sim/eval/scores.hpp, score_tokens): NLL, KL(base ||
// run), p(target) and top-1 agreement, against the definitions computed in long double on
// small vocabularies, edge cases first.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/scores.hpp"

using dgq::sim::score_tokens;

namespace {

struct Reference {
  long double nll = 0, kld = 0;
};

// The definitions, term by term in long double: log-softmax of each row, then the sums.
Reference reference(const std::vector<float>& b, const std::vector<float>& q, std::size_t row, std::size_t vocab,
                    std::int32_t target) {
  const auto log_z = [&](const std::vector<float>& x) {
    long double peak = x[row * vocab], sum = 0;
    for (std::size_t i = 0; i < vocab; ++i) peak = std::max<long double>(peak, x[row * vocab + i]);
    for (std::size_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<long double>(x[row * vocab + i]) - peak);
    return peak + std::log(sum);
  };
  const long double zb = log_z(b), zq = log_z(q);
  Reference r;
  r.nll = zq - q[row * vocab + static_cast<std::size_t>(target)];
  for (std::size_t i = 0; i < vocab; ++i) {
    const long double lb = b[row * vocab + i] - zb, lq = q[row * vocab + i] - zq;
    r.kld += std::exp(lb) * (lb - lq);
  }
  return r;
}

// Deterministic logits of both signs and a spread of magnitudes.
std::vector<float> logits_pattern(std::size_t n, int salt, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(salt)) +
           0.01f * static_cast<float>((i * 7 + static_cast<std::size_t>(salt)) % 13);
  return v;
}

}  // namespace

TEST_CASE("no scored token gives empty scores", "[sim][scores]") {
  const dgq::sim::TokenScores s = score_tokens({}, {}, {}, 5);
  CHECK(s.size() == 0);
}

TEST_CASE("logits that do not fill rows x vocab are refused", "[sim][scores]") {
  const std::vector<float> b(5), q(6);
  const std::vector<std::int32_t> t{0};
  CHECK_THROWS_AS(score_tokens(b, q, t, 5), dgq::InputError);
}

TEST_CASE("the base against itself: KL exactly 0, its own NLL and top-1", "[sim][scores]") {
  const std::vector<float> b{1.0f, 3.0f, -2.0f, 3.0f};  // two equal maxima: the first is the top-1
  const std::vector<std::int32_t> t{1};
  const dgq::sim::TokenScores s = score_tokens(b, b, t, 4);
  CHECK(s.kld[0] == 0.0);
  CHECK(s.same_top1[0]);
  CHECK(s.nll[0] == Approx(static_cast<double>(reference(b, b, 0, 4, 1).nll)).epsilon(1e-14));
  CHECK(s.p_target[0] == Approx(std::exp(-s.nll[0])).epsilon(1e-15));
}

TEST_CASE("a shift of every logit changes no score", "[sim][scores]") {
  const std::vector<float> b{0.5f, -1.0f, 2.0f}, q{100.5f, 99.0f, 102.0f};  // q = b + 100, exactly
  const std::vector<std::int32_t> t{2};
  const dgq::sim::TokenScores s = score_tokens(b, q, t, 3);
  CHECK(std::fabs(s.kld[0]) < 1e-15);
  CHECK(s.same_top1[0]);
}

TEST_CASE("two words: KL and NLL of the closed form", "[sim][scores]") {
  // p_b = softmax(0, ln 3) = (1/4, 3/4), p_q = softmax(0, 0) = (1/2, 1/2).
  const std::vector<float> b{0.0f, std::log(3.0f)}, q{0.0f, 0.0f};
  const std::vector<std::int32_t> t{0};
  const dgq::sim::TokenScores s = score_tokens(b, q, t, 2);
  const double p1 = 1.0 / (1.0 + std::exp(double(std::log(3.0f)))), p2 = 1.0 - p1;
  CHECK(s.kld[0] == Approx(p1 * std::log(p1 / 0.5) + p2 * std::log(p2 / 0.5)).epsilon(1e-12));
  CHECK(s.nll[0] == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK_FALSE(s.same_top1[0]);  // q's first word ties its second: q's top-1 is word 0, b's word 1
}

TEST_CASE("a vocabulary of 1000 over 5 rows: every score within 1e-12 of the long-double definitions",
          "[sim][scores]") {
  const std::size_t vocab = 1003, rows = 5;  // not a multiple of any SIMD width
  const std::vector<float> b = logits_pattern(rows * vocab, 1, 8.0f);
  std::vector<float> q = b;
  for (std::size_t i = 0; i < q.size(); ++i) q[i] += 0.05f * std::cos(0.11f * static_cast<float>(i));
  q[2 * vocab + 17] = -1e4f;  // a word the run rules out
  const std::vector<std::int32_t> t{0, 5, 17, 1000, 1002};
  const dgq::sim::TokenScores s = score_tokens(b, q, t, static_cast<std::int64_t>(vocab));
  for (std::size_t r = 0; r < rows; ++r) {
    const Reference ref = reference(b, q, r, vocab, t[r]);
    INFO("row " << r);
    CHECK(s.kld[r] > 0.0);
    CHECK(std::fabs(s.kld[r] - static_cast<double>(ref.kld)) <= 1e-12 * std::max(1.0, static_cast<double>(ref.kld)));
    CHECK(std::fabs(s.nll[r] - static_cast<double>(ref.nll)) <= 1e-12 * std::max(1.0, static_cast<double>(ref.nll)));
  }
}

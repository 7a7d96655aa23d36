// Attention metrics of one probe against values computed by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "dgq/sim/metrics/attention.hpp"

using dgq::sim::ProbeAttention;

namespace {
// Tolerance of the hand-computed closed forms (exp/log of the C library, a few ulp).
constexpr double kClosedFormRel = 1e-14;
}  // namespace

TEST_CASE("softmax of equal logits is uniform and of an empty window is empty") {
  std::vector<double> p;
  dgq::sim::softmax(std::vector<double>{}, p);
  CHECK(p.empty());
  dgq::sim::softmax(std::vector<double>{3.0, 3.0, 3.0, 3.0}, p);
  REQUIRE(p.size() == 4);
  for (double x : p) CHECK(x == 0.25);
}

TEST_CASE("softmax of logits 0 and ln 3 is 1/4, 3/4") {
  std::vector<double> p;
  dgq::sim::softmax(std::vector<double>{0.0, std::log(3.0)}, p);
  CHECK(p[0] == Approx(0.25).epsilon(kClosedFormRel));
  CHECK(p[1] == Approx(0.75).epsilon(kClosedFormRel));
}

TEST_CASE("softmax subtracts the maximum so huge logits do not overflow") {
  std::vector<double> p;
  dgq::sim::softmax(std::vector<double>{1000.0, 1000.0}, p);
  CHECK(p[0] == 0.5);
  CHECK(p[1] == 0.5);
}

TEST_CASE("logits are q.k / sqrt(d), exactly on small integers") {
  const float q[4] = {1, 2, 3, 4};
  const float k[8] = {1, 1, 1, 1, 0, 0, 0, -2};  // two keys, d = 4
  std::vector<double> logits;
  dgq::sim::attention_logits(q, k, 2, 4, logits);
  CHECK(logits == std::vector<double>{5.0, -4.0});  // 10/2, -8/2
}

TEST_CASE("the fp64 dot product covers the lane tail") {
  std::vector<float> a(19), b(19);
  double expect = 0;
  for (int i = 0; i < 19; ++i) {
    a[i] = static_cast<float>(i + 1);
    b[i] = static_cast<float>(2 * i - 7);
    expect += a[i] * static_cast<double>(b[i]);
  }
  CHECK(dgq::sim::dot_fp64(a.data(), b.data(), 19) == expect);  // integers: exact
}

TEST_CASE("attention output is the probability-weighted sum of values") {
  const std::vector<double> p = {0.25, 0.75};
  const float v[4] = {4, 8, -4, 0};  // two rows of d = 2
  std::vector<double> o;
  dgq::sim::attention_output(p, v, nullptr, 2, o);
  CHECK(o == std::vector<double>{-2.0, 2.0});
  const std::int64_t rows[2] = {1, 0};  // gathered rows
  dgq::sim::attention_output(p, v, rows, 2, o);
  CHECK(o == std::vector<double>{2.0, 6.0});
}

TEST_CASE("KL is zero for identical distributions and matches the closed form otherwise") {
  const std::vector<double> p = {0.5, 0.5};
  CHECK(dgq::sim::kl_divergence(p, p) == 0.0);
  const std::vector<double> q = {0.25, 0.75};
  const double expect = 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75);
  CHECK(dgq::sim::kl_divergence(p, q) == Approx(expect).epsilon(kClosedFormRel));
}

TEST_CASE("KL floors a zero reconstructed probability at 1e-300 and skips p_j = 0") {
  const std::vector<double> p = {1.0, 0.0};
  const std::vector<double> q = {0.0, 1.0};
  const double kl = dgq::sim::kl_divergence(p, q);
  CHECK(std::isfinite(kl));
  CHECK(kl == Approx(-std::log(1e-300)).epsilon(kClosedFormRel));
  CHECK(dgq::sim::kl_divergence(q, p) == Approx(-std::log(1e-300)).epsilon(kClosedFormRel));
}

// replay --scheme fp16 once reported KL mean -3.6e-304 for identical distributions, the
// floor applying to p̂ only: a key with 0 < p_j < 1e-300 scored p_j (ln p_j - ln 1e-300) < 0.
TEST_CASE("KL of identical distributions with keys below the floor is exactly 0") {
  const std::vector<double> p = {1.0 - 1e-12, 1e-12 - 1e-310, 1e-310, 5e-324};
  CHECK(dgq::sim::kl_divergence(p, p) == 0.0);
  CHECK_FALSE(std::signbit(dgq::sim::kl_divergence(p, p)));
}

TEST_CASE("KL is never negative: a key below the floor counts for nothing, rounding below 0 is 0") {
  // p̂ puts 1e-310 more mass than p on a key that p gives 1e-310: its true term is ~-7e-311.
  const std::vector<double> p = {1.0, 1e-310};
  const std::vector<double> q = {1.0, 2e-310};
  CHECK(dgq::sim::kl_divergence(p, q) == 0.0);
  // Two normalisations of one distribution that differ in the last bit: the exact KL is ~1e-32,
  // the rounded sum may fall below 0.
  const std::vector<double> a = {0.1, 0.2, 0.7};
  const std::vector<double> b = {std::nextafter(0.1, 1.0), 0.2, std::nextafter(0.7, 0.0)};
  CHECK(dgq::sim::kl_divergence(a, b) >= 0.0);
  CHECK(dgq::sim::kl_divergence(b, a) >= 0.0);
}

TEST_CASE("total variation is half the L1 distance") {
  CHECK(dgq::sim::total_variation(std::vector<double>{1, 0}, std::vector<double>{0, 1}) == 1.0);
  CHECK(dgq::sim::total_variation(std::vector<double>{0.5, 0.5}, std::vector<double>{0.25, 0.75}) == 0.25);
}

TEST_CASE("top-k breaks ties by the smaller index") {
  const std::vector<double> p = {0.1, 0.3, 0.3, 0.0, 0.3};
  CHECK(dgq::sim::top_k_indices(p, 2) == std::vector<std::int64_t>{1, 2});
  CHECK(dgq::sim::top_k_indices(p, 4) == std::vector<std::int64_t>{1, 2, 4, 0});
}

TEST_CASE("top-k with fewer keys than k uses k = number of keys") {
  const std::vector<double> p = {0.2, 0.8};
  CHECK(dgq::sim::top_k_indices(p, 8).size() == 2);
  CHECK(dgq::sim::top_k_recall(p, std::vector<double>{0.9, 0.1}, 8) == 1.0);
  CHECK(dgq::sim::top_k_recall(std::vector<double>{}, std::vector<double>{}, 8) == 1.0);
}

TEST_CASE("top-k recall counts the overlap of the two top sets") {
  const std::vector<double> p = {0.4, 0.3, 0.2, 0.1};
  const std::vector<double> q = {0.4, 0.1, 0.2, 0.3};
  CHECK(dgq::sim::top_k_recall(p, q, 2) == 0.5);  // {0,1} vs {0,3}
  CHECK(dgq::sim::top_k_recall(p, q, 3) == Approx(2.0 / 3.0).epsilon(kClosedFormRel));
  // A tie in q resolved towards the smaller index keeps key 1 in its top-2.
  CHECK(dgq::sim::top_k_recall(p, std::vector<double>{0.4, 0.3, 0.3, 0.0}, 2) == 1.0);
}

TEST_CASE("relative L2 and cosine on zero vectors follow the documented conventions") {
  const std::vector<double> zero = {0, 0};
  const std::vector<double> one = {1, 0};
  CHECK(dgq::sim::relative_l2(zero, zero) == 0.0);
  CHECK(dgq::sim::relative_l2(zero, one) == std::numeric_limits<double>::infinity());
  CHECK(dgq::sim::cosine_similarity(zero, zero) == 1.0);
  CHECK(dgq::sim::cosine_similarity(zero, one) == 0.0);
  CHECK(dgq::sim::cosine_similarity(one, zero) == 0.0);
}

TEST_CASE("relative L2 and cosine on a 3-4-5 triangle") {
  const std::vector<double> o = {3, 0};
  const std::vector<double> o_hat = {3, 4};
  CHECK(dgq::sim::relative_l2(o, o_hat) == Approx(4.0 / 3.0).epsilon(kClosedFormRel));
  CHECK(dgq::sim::cosine_similarity(o, o_hat) == Approx(0.6).epsilon(kClosedFormRel));
}

TEST_CASE("identical attention gives KL 0, TV 0, recall 1, output error 0, cosine 1") {
  const float q[2] = {1, -1};
  const float k[6] = {0.5f, 1, 2, -1, 0, 0};
  const float v[6] = {1, 2, 3, 4, 5, 6};
  ProbeAttention a, b;
  dgq::sim::compute_probe_attention(q, k, v, 3, 2, a);
  dgq::sim::compute_probe_attention(q, k, v, 3, 2, b);
  const auto m = dgq::sim::compare_attention(a, b);
  CHECK(m.kl == 0.0);
  CHECK(m.tv == 0.0);
  CHECK(m.top8 == 1.0);
  CHECK(m.top32 == 1.0);
  CHECK(m.out_rel_l2 == 0.0);
  CHECK(m.out_cos == Approx(1.0).epsilon(kClosedFormRel));
}

TEST_CASE("a reconstruction that swaps which key wins is measured by hand") {
  // d = 1, q = 1: logits are k itself. K = {0, ln 3} -> p = {1/4, 3/4}; K̂ = {ln 3, 0}.
  const float q[1] = {1};
  const float k[2] = {0.0f, static_cast<float>(std::log(3.0))};
  const float k_hat[2] = {k[1], k[0]};
  const float v[2] = {0, 4};
  ProbeAttention a, b;
  dgq::sim::compute_probe_attention(q, k, v, 2, 1, a);
  dgq::sim::compute_probe_attention(q, k_hat, v, 2, 1, b);
  const auto m = dgq::sim::compare_attention(a, b);
  CHECK(m.kl == Approx(0.5 * std::log(3.0)).epsilon(1e-7));  // ln 3 rounded to fp32 in k
  CHECK(m.tv == Approx(0.5).epsilon(1e-7));
  CHECK(m.top8 == 1.0);                                    // both keys are in the top-8 of a 2-key window
  CHECK(m.out_rel_l2 == Approx(2.0 / 3.0).epsilon(1e-7));  // o = 3, ô = 1
  CHECK(m.out_cos == 1.0);
}

TEST_CASE("clean-restricted metrics ignore noise keys and noise mass is measured") {
  // d = 1, q = 1, three keys; key 1 is noise. Reconstruction changes only the noise key.
  const float q[1] = {1};
  const float k[3] = {0, 0, 0};
  const float k_hat[3] = {0, static_cast<float>(std::log(2.0)), 0};
  const float v[3] = {1, 100, 3};
  const std::uint8_t mask[3] = {0, 1, 0};
  ProbeAttention a, b;
  dgq::sim::compute_probe_attention(q, k, v, 3, 1, a);
  dgq::sim::compute_probe_attention(q, k_hat, v, 3, 1, b);
  dgq::sim::NoiseScratch scratch;
  const auto m = dgq::sim::compare_attention_noise(a, b, v, v, 1, mask, scratch);
  CHECK(m.noise_mass == Approx(1.0 / 3.0).epsilon(kClosedFormRel));
  CHECK(m.noise_mass_hat == Approx(0.5).epsilon(1e-7));
  CHECK(m.clean.kl == 0.0);
  CHECK(m.clean.tv == 0.0);
  CHECK(m.clean.top8 == 1.0);
  CHECK(m.clean.out_rel_l2 == 0.0);
  CHECK(scratch.ref.o == std::vector<double>{2.0});  // (1 + 3) / 2 over the clean keys
  // The unrestricted comparison does see the change.
  CHECK(dgq::sim::compare_attention(a, b).kl > 0.0);
}

TEST_CASE("clean-restricted metrics are NaN when every attended key is noise") {
  const float q[1] = {1};
  const float k[1] = {1};
  const float v[1] = {1};
  const std::uint8_t mask[1] = {1};
  ProbeAttention a;
  dgq::sim::compute_probe_attention(q, k, v, 1, 1, a);
  dgq::sim::NoiseScratch scratch;
  const auto m = dgq::sim::compare_attention_noise(a, a, v, v, 1, mask, scratch);
  CHECK(std::isnan(m.clean.kl));
  CHECK(std::isnan(m.clean.out_cos));
  CHECK(m.noise_mass == 1.0);
}

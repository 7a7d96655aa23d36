// Reconstruction metrics and the aggregate statistics (nearest-rank percentiles).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "dgq/sim/metrics/reconstruction.hpp"
#include "dgq/sim/metrics/summary.hpp"

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("an exact copy has zero error and infinite SNR") {
  const float x[3] = {1, -2, 3};
  const auto m = dgq::sim::reconstruction_metrics(x, x, 3);
  CHECK(m.mse == 0.0);
  CHECK(m.max_abs_err == 0.0);
  CHECK(m.rel_fro == 0.0);
  CHECK(m.snr_db == kInf);
}

TEST_CASE("an empty tensor has zero error") {
  const auto m = dgq::sim::reconstruction_metrics(nullptr, nullptr, 0);
  CHECK(m.mse == 0.0);
  CHECK(m.rel_fro == 0.0);
}

TEST_CASE("reconstruction metrics on hand-made values") {
  const float x[4] = {3, 0, 0, 4};      // ||x||^2 = 25
  const float x_hat[4] = {3, 1, 0, 4};  // error 1 at one element
  const auto m = dgq::sim::reconstruction_metrics(x, x_hat, 4);
  CHECK(m.mse == 0.25);
  CHECK(m.max_abs_err == 1.0);
  CHECK(m.rel_fro == 0.2);
  CHECK(m.snr_db == Approx(10.0 * std::log10(25.0)).epsilon(1e-15));
}

TEST_CASE("a zero original with a nonzero reconstruction has infinite relative error") {
  const float x[2] = {0, 0};
  const float x_hat[2] = {0, 2};
  const auto m = dgq::sim::reconstruction_metrics(x, x_hat, 2);
  CHECK(m.rel_fro == kInf);
  CHECK(m.snr_db == -kInf);
  CHECK(m.mse == 2.0);
}

TEST_CASE("summary of nothing or only NaN is NaN with count 0") {
  const auto empty = dgq::sim::summarize(std::vector<double>{});
  CHECK(empty.count == 0);
  CHECK(std::isnan(empty.mean));
  CHECK(std::isnan(empty.p95));
  const auto nans = dgq::sim::summarize(std::vector<double>{kNaN, kNaN});
  CHECK(nans.count == 0);
  CHECK(std::isnan(nans.max));
}

TEST_CASE("summary of one value is that value everywhere") {
  const auto s = dgq::sim::summarize(std::vector<double>{7.5});
  CHECK(s.mean == 7.5);
  CHECK(s.p50 == 7.5);
  CHECK(s.p95 == 7.5);
  CHECK(s.max == 7.5);
}

TEST_CASE("nearest-rank percentiles of 1..20 and of 1..10") {
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);  // unsorted input
  const auto s = dgq::sim::summarize(v);
  CHECK(s.mean == 10.5);
  CHECK(s.p50 == 10.0);  // rank ceil(0.5 * 20) = 10
  CHECK(s.p95 == 19.0);  // rank ceil(0.95 * 20) = 19
  CHECK(s.max == 20.0);
  std::vector<double> w;
  for (int i = 1; i <= 10; ++i) w.push_back(i);
  const auto t = dgq::sim::summarize(w);
  CHECK(t.p50 == 5.0);   // rank 5
  CHECK(t.p95 == 10.0);  // rank ceil(9.5) = 10
}

TEST_CASE("nearest rank does not step past an exact integer rank") {
  // 0.95 * 100 in floating point is not exactly 95; the rank must still be 95.
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  CHECK(dgq::sim::nearest_rank(v, 95) == 95.0);
  CHECK(dgq::sim::nearest_rank(v, 50) == 50.0);
  CHECK(dgq::sim::nearest_rank(v, 100) == 100.0);
}

TEST_CASE("summary skips NaN and keeps infinities") {
  const auto s = dgq::sim::summarize(std::vector<double>{1.0, kNaN, 3.0});
  CHECK(s.count == 2);
  CHECK(s.mean == 2.0);
  CHECK(s.p50 == 1.0);
  CHECK(s.max == 3.0);
  const auto t = dgq::sim::summarize(std::vector<double>{1.0, kInf});
  CHECK(t.max == kInf);
  CHECK(t.mean == kInf);
}

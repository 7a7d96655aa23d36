// score_answer() (dgq/sim/eval/passkey.hpp): exact match, first wrong token, argmax ties and the
// answer's log-probability from teacher-forced logits, on hand-made rows whose answers are known.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/passkey.hpp"

using namespace dgq;

namespace {

constexpr std::int64_t kVocab = 4;

// log softmax(row)[token] in long double, written out independently of the scorer.
double expected_log_probability(const std::vector<float>& row, int token) {
  long double sum = 0;
  for (float x : row) sum += std::exp(static_cast<long double>(x));
  return static_cast<double>(static_cast<long double>(row[static_cast<std::size_t>(token)]) - std::log(sum));
}

std::vector<float> rows(const std::vector<std::vector<float>>& r) {
  std::vector<float> out;
  for (const auto& row : r) out.insert(out.end(), row.begin(), row.end());
  return out;
}

}  // namespace

TEST_CASE("score_answer: every row's argmax is the answer's token: exact, nothing wrong") {
  const std::vector<std::vector<float>> r = {{0, 3, 1, 2}, {5, 1, 0, 2}, {0, 0, 0, 9}};
  const std::vector<std::int32_t> answer = {1, 0, 3};
  const sim::AnswerScore s = sim::score_answer(rows(r), answer, kVocab);
  CHECK(s.exact);
  CHECK(s.first_wrong == -1);
  CHECK(s.predicted == answer);
  const double want =
      expected_log_probability(r[0], 1) + expected_log_probability(r[1], 0) + expected_log_probability(r[2], 3);
  CHECK(s.logprob == Approx(want).epsilon(1e-14));
  CHECK(s.logprob < 0);
}

TEST_CASE("score_answer: the first mismatch is reported, later ones do not move it") {
  const std::vector<std::vector<float>> r = {{0, 3, 1, 2}, {5, 1, 0, 2}, {0, 0, 0, 9}, {1, 0, 0, 0}};
  const std::vector<std::int32_t> answer = {1, 2, 3, 3};  // rows 1 and 3 predict 0
  const sim::AnswerScore s = sim::score_answer(rows(r), answer, kVocab);
  CHECK_FALSE(s.exact);
  CHECK(s.first_wrong == 1);
  CHECK(s.predicted == std::vector<std::int32_t>{1, 0, 3, 0});
  double want = 0;
  for (std::size_t i = 0; i < r.size(); ++i) want += expected_log_probability(r[i], answer[i]);
  CHECK(s.logprob == Approx(want).epsilon(1e-14));  // of the true tokens, not the predicted ones
}

TEST_CASE("score_answer: a tie decodes to the lowest token id") {
  const std::vector<float> tie = {1, 7, 2, 7};
  const sim::AnswerScore low = sim::score_answer(tie, std::vector<std::int32_t>{1}, kVocab);
  CHECK(low.exact);
  CHECK(low.predicted == std::vector<std::int32_t>{1});
  const sim::AnswerScore high = sim::score_answer(tie, std::vector<std::int32_t>{3}, kVocab);
  CHECK_FALSE(high.exact);
  CHECK(high.first_wrong == 0);
  // Equal logits, equal probabilities: the tie changes the decoded token, not the score.
  CHECK(high.logprob == low.logprob);
}

TEST_CASE("score_answer: a one-token answer, right and wrong") {
  const std::vector<float> row = {0.5f, -1, 2, 0};
  const sim::AnswerScore right = sim::score_answer(row, std::vector<std::int32_t>{2}, kVocab);
  CHECK(right.exact);
  CHECK(right.first_wrong == -1);
  const sim::AnswerScore wrong = sim::score_answer(row, std::vector<std::int32_t>{0}, kVocab);
  CHECK_FALSE(wrong.exact);
  CHECK(wrong.first_wrong == 0);
  CHECK(wrong.predicted == std::vector<std::int32_t>{2});
  CHECK(wrong.logprob == Approx(expected_log_probability(row, 0)).epsilon(1e-14));
}

TEST_CASE("score_answer: large logits do not overflow the log-probability") {
  const std::vector<float> row = {1e30f, 1e30f - 1e24f, -1e30f, 0};
  const sim::AnswerScore s = sim::score_answer(row, std::vector<std::int32_t>{0}, kVocab);
  CHECK(s.exact);
  CHECK(std::isfinite(s.logprob));
  CHECK(s.logprob == 0.0);  // the other terms are exp(-1e24) = 0 in double
}

TEST_CASE("score_answer: bad sizes and token ids are refused") {
  const std::vector<float> one_row = {0, 1, 2, 3};
  CHECK_THROWS_AS(sim::score_answer(one_row, std::vector<std::int32_t>{}, kVocab), InputError);
  CHECK_THROWS_AS(sim::score_answer(one_row, std::vector<std::int32_t>{1, 2}, kVocab), InputError);
  CHECK_THROWS_WITH(sim::score_answer(one_row, std::vector<std::int32_t>{4}, kVocab),
                    "score_answer: answer token 0 is 4, outside the vocabulary of 4");
  CHECK_THROWS_AS(sim::score_answer(one_row, std::vector<std::int32_t>{-1}, kVocab), InputError);
}

// score_answer() (dgq/sim/eval/passkey.hpp): one passkey answer scored from its teacher-forced logits.
// Greedy decoding emits the answer iff every row's argmax is the true token: by induction, the
// first r tokens decoded equal the answer's, so row r sees the same prefix in both and decodes
// its argmax (docs/eval.md, "The passkey task").
#include <cmath>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/passkey.hpp"

namespace dgq::sim {
namespace {

// The lowest id among the row's maxima (a strict > scan), so that ties decode one way whatever
// the platform; greedy samplers that take the first maximum (llama.cpp's, numpy's argmax) agree.
std::int32_t lowest_argmax(const float* row, std::int64_t vocab) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < vocab; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<std::int32_t>(best);
}

// log softmax(row)[token], in double, with the peak taken out before exp (no overflow).
double log_probability(const float* row, std::int64_t vocab, std::int32_t token, std::int32_t peak_id) {
  const double peak = row[peak_id];
  double sum = 0;
  for (std::int64_t i = 0; i < vocab; ++i) sum += std::exp(double(row[i]) - peak);
  return double(row[token]) - (peak + std::log(sum));
}

}  // namespace

AnswerScore score_answer(std::span<const float> logits, std::span<const std::int32_t> answer, std::int64_t vocab) {
  const auto rows = static_cast<std::int64_t>(answer.size());
  if (rows == 0) throw InputError("score_answer: an empty answer");
  if (vocab <= 0 || logits.size() != static_cast<std::size_t>(rows * vocab))
    throw InputError("score_answer: " + std::to_string(logits.size()) + " logits, expected " + std::to_string(rows) +
                     " answer tokens x vocab " + std::to_string(vocab));
  AnswerScore s;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * vocab;
    const std::int32_t truth = answer[static_cast<std::size_t>(r)];
    if (truth < 0 || truth >= vocab)
      throw InputError("score_answer: answer token " + std::to_string(r) + " is " + std::to_string(truth) +
                       ", outside the vocabulary of " + std::to_string(vocab));
    const std::int32_t best = lowest_argmax(row, vocab);
    s.predicted.push_back(best);
    if (best != truth && s.first_wrong < 0) s.first_wrong = r;
    s.logprob += log_probability(row, vocab, truth, best);
  }
  s.exact = s.first_wrong < 0;
  return s;
}

}  // namespace dgq::sim

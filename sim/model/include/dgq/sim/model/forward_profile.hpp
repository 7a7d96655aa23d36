#pragma once
// Where the forward pass spends its time: wall seconds and useful floating-point operations by
// part, summed over every pass since the last reset. One process-wide account: the passes run
// one after another (each parallel inside), and the parts are timed outside the parallel
// regions. `dgq eval --profile` prints it beside the machine's measured GEMM rate
// (gemm_rate.hpp), the share of that rate being the runner's figure of merit.
//
// Useful operations, as a GEMM count gives them: a weight product x W^T is 2 rows in out; the
// attention of a query at position p is 4 d per attended key per query head (Q K^T and P V; the
// causal mask and the sliding window decide the keys; tiles the mask cuts through are not
// counted); the logits are 2 rows hidden vocab. The cache (store, read, the quantizing scheme)
// is timed without operations, and `other` (norms, RoPE, embeddings, copies) is the pass's wall
// time less the parts.
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace dgq::sim {

enum class ForwardPart : std::uint8_t { weight_gemms, attention, logits, cache };
inline constexpr int kForwardPartCount = 4;
const char* forward_part_name(ForwardPart part);

struct ForwardPartTotals {
  double seconds = 0, flops = 0;
};

struct ForwardProfile {
  std::array<ForwardPartTotals, kForwardPartCount> parts{};
  double pass_seconds = 0;  // the passes' wall time, the parts included
  // Outside the passes: scoring every scored token against the base (log-softmax, KL, NLL over
  // the vocabulary), which the evaluation times with ScoringTimer.
  double scoring_seconds = 0;
  const ForwardPartTotals& operator[](ForwardPart p) const { return parts[static_cast<std::size_t>(p)]; }
  double other_seconds() const;
};

const ForwardProfile& forward_profile();
void reset_forward_profile();

// Adds its lifetime's wall time (and `flops`) to a part.
class ForwardPartTimer {
 public:
  ForwardPartTimer(ForwardPart part, double flops);
  ~ForwardPartTimer();
  ForwardPartTimer(const ForwardPartTimer&) = delete;
  ForwardPartTimer& operator=(const ForwardPartTimer&) = delete;

 private:
  ForwardPart part_;
  double flops_;
  std::chrono::steady_clock::time_point start_;
};

// Adds its lifetime's wall time to the scoring's total (score_tokens).
class ScoringTimer {
 public:
  ScoringTimer();
  ~ScoringTimer();
  ScoringTimer(const ScoringTimer&) = delete;
  ScoringTimer& operator=(const ScoringTimer&) = delete;

 private:
  std::chrono::steady_clock::time_point start_;
};

// Adds its lifetime's wall time to the passes' total (forward_hidden, row_logits, decode_logits).
class ForwardPassTimer {
 public:
  ForwardPassTimer();
  ~ForwardPassTimer();
  ForwardPassTimer(const ForwardPassTimer&) = delete;
  ForwardPassTimer& operator=(const ForwardPassTimer&) = delete;

 private:
  std::chrono::steady_clock::time_point start_;
};

// The profile as a table: seconds, share of the passes, GFLOP, GFLOP/s and the share of
// `gemm_gflops` (the measured rate of gemm_rate.hpp) for each part; then the scoring's seconds
// and the rest of the run's wall time (loading the model, writing results), from `run_seconds`.
std::string format_forward_profile(const ForwardProfile& profile, double gemm_gflops, std::string_view gemm_library,
                                   int threads, double run_seconds);

// The attention's useful operations (above) for `tokens` queries at first_position.. against
// `keys` keys, with a sliding window (0: none).
double attention_flops(std::int64_t tokens, std::int64_t first_position, std::int64_t keys, std::int64_t window,
                       std::int64_t q_heads, std::int64_t head_dim);

}  // namespace dgq::sim

#include "dgq/sim/model/forward_profile.hpp"

#include <algorithm>
#include <cstdio>

namespace dgq::sim {
namespace {

ForwardProfile& account() {
  static ForwardProfile profile;
  return profile;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* forward_part_name(ForwardPart part) {
  switch (part) {
    case ForwardPart::weight_gemms: return "weight GEMMs";
    case ForwardPart::attention: return "attention";
    case ForwardPart::logits: return "logits";
    case ForwardPart::cache: return "cache (store, read)";
  }
  return "?";
}

double ForwardProfile::other_seconds() const {
  double parts_seconds = 0;
  for (const ForwardPartTotals& p : parts) parts_seconds += p.seconds;
  return std::max(0.0, pass_seconds - parts_seconds);
}

const ForwardProfile& forward_profile() { return account(); }
void reset_forward_profile() { account() = ForwardProfile{}; }

ForwardPartTimer::ForwardPartTimer(ForwardPart part, double flops)
    : part_(part), flops_(flops), start_(std::chrono::steady_clock::now()) {}

ForwardPartTimer::~ForwardPartTimer() {
  ForwardPartTotals& t = account().parts[static_cast<std::size_t>(part_)];
  t.seconds += seconds_since(start_);
  t.flops += flops_;
}

// Passes do not nest (a decoder's pass calls output_logits, not row_logits), so each second
// is counted once.
ScoringTimer::ScoringTimer() : start_(std::chrono::steady_clock::now()) {}
ScoringTimer::~ScoringTimer() { account().scoring_seconds += seconds_since(start_); }

ForwardPassTimer::ForwardPassTimer() : start_(std::chrono::steady_clock::now()) {}
ForwardPassTimer::~ForwardPassTimer() { account().pass_seconds += seconds_since(start_); }

std::string format_forward_profile(const ForwardProfile& profile, double gemm_gflops, std::string_view gemm_library,
                                   int threads, double run_seconds) {
  char line[160];
  std::string out = "forward-pass profile (" + std::to_string(threads) + " threads; fp32 GEMM rate measured now: ";
  std::snprintf(line, sizeof line, "%.1f GFLOP/s, %.*s, 1024^3)\n", gemm_gflops, static_cast<int>(gemm_library.size()),
                gemm_library.data());
  out += line;
  std::snprintf(line, sizeof line, "%-22s %10s %8s %10s %9s %9s\n", "part", "seconds", "share", "GFLOP", "GFLOP/s",
                "of GEMM");
  out += line;
  const double total = std::max(profile.pass_seconds, 1e-12);
  const auto row = [&](const char* name, double seconds, double flops) {
    if (flops > 0) {
      const double rate = flops / std::max(seconds, 1e-12) / 1e9;
      std::snprintf(line, sizeof line, "%-22s %10.3f %7.1f%% %10.2f %9.1f %8.1f%%\n", name, seconds,
                    100.0 * seconds / total, flops / 1e9, rate, 100.0 * rate / gemm_gflops);
    } else {
      std::snprintf(line, sizeof line, "%-22s %10.3f %7.1f%% %10s %9s %9s\n", name, seconds, 100.0 * seconds / total,
                    "-", "-", "-");
    }
    out += line;
  };
  double flops = 0;
  for (int i = 0; i < kForwardPartCount; ++i) {
    const ForwardPartTotals& t = profile.parts[static_cast<std::size_t>(i)];
    row(forward_part_name(static_cast<ForwardPart>(i)), t.seconds, t.flops);
    flops += t.flops;
  }
  row("other (norms, RoPE)", profile.other_seconds(), 0);
  row("all passes", profile.pass_seconds, flops);
  std::snprintf(line, sizeof line, "scoring (log-softmax, KL, NLL over the vocabulary): %.3f s\n",
                profile.scoring_seconds);
  out += line;
  std::snprintf(line, sizeof line, "outside the passes and the scoring (load, output): %.3f s of the run's %.3f s\n",
                std::max(0.0, run_seconds - profile.pass_seconds - profile.scoring_seconds), run_seconds);
  out += line;
  return out;
}

double attention_flops(std::int64_t tokens, std::int64_t first_position, std::int64_t keys, std::int64_t window,
                       std::int64_t q_heads, std::int64_t head_dim) {
  double attended = 0;
  for (std::int64_t r = 0; r < tokens; ++r) {
    const std::int64_t p = first_position + r;
    const std::int64_t lo = window > 0 ? std::max<std::int64_t>(0, p - window + 1) : 0;
    const std::int64_t hi = std::min(p, keys - 1);
    if (hi >= lo) attended += static_cast<double>(hi - lo + 1);
  }
  return 4.0 * static_cast<double>(head_dim) * static_cast<double>(q_heads) * attended;
}

}  // namespace dgq::sim

#pragma once
// What a `dgq eval` run scores (docs/eval.md, "Metrics"): per token the next-token NLL, KL
// divergence and agreement with the base cache, and their summary as llama.cpp reports it.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace dgq::sim {

// Per scored token: what the run predicted for the next token, and how far from the base.
struct TokenScores {
  std::vector<double> nll;              // -log p(target)
  std::vector<double> kld;              // KL(base || this) of the next-token distribution
  std::vector<double> p_target;         // p(target)
  std::vector<std::uint8_t> same_top1;  // argmax equal to the base's argmax
  void append(const TokenScores& other);
  std::size_t size() const { return nll.size(); }
};
// logits and base_logits [rows][vocab]; targets[r] is the token predicted by row r.
TokenScores score_tokens(std::span<const float> base_logits, std::span<const float> logits,
                         std::span<const std::int32_t> targets, std::int64_t vocab);

struct EvalSummary {
  double ppl = 0, ppl_stderr = 0, dppl = 0, dppl_stderr = 0;
  double kld_mean = 0, kld_stderr = 0, kld_median = 0, kld_p90 = 0, kld_p99 = 0, kld_max = 0;
  double rms_dp = 0, same_top1 = 0, bits_per_element = 0;
  // Bits per element held on average while decoding (sum over appends of the bytes held / of
  // the elements held); equals bits_per_element for a prefill cache.
  double bits_averaged = 0;
  // bits_per_element of the K cache and of the V cache apart (a K/V pair's two sides); NaN
  // when the chunks of an older results file did not record the K bytes.
  double bits_k = 0, bits_v = 0;
  // Mean attention KL of probe queries, exact vs cached K/V, over layers, heads and probes
  // (the base run's comes from the base logits file when that is reused).
  double attn_kl_mean = 0;
  std::vector<double> attn_kl_per_layer;
  std::int64_t tokens = 0;
};
// The summary's figures under the names results files and the JSON report give them, in
// docs/eval.md's order: one list, so that the HDF5 attributes and the JSON cannot drift apart.
struct NamedFigure {
  const char* name;
  double value;
};
inline std::array<NamedFigure, 17> summary_figures(const EvalSummary& s) {
  return {{{"bits_per_element", s.bits_per_element},
           {"bits_averaged", s.bits_averaged},
           {"bits_k", s.bits_k},
           {"bits_v", s.bits_v},
           {"ppl", s.ppl},
           {"ppl_stderr", s.ppl_stderr},
           {"dppl", s.dppl},
           {"dppl_stderr", s.dppl_stderr},
           {"kld_mean", s.kld_mean},
           {"kld_stderr", s.kld_stderr},
           {"kld_median", s.kld_median},
           {"kld_p90", s.kld_p90},
           {"kld_p99", s.kld_p99},
           {"kld_max", s.kld_max},
           {"rms_dp", s.rms_dp},
           {"same_top1", s.same_top1},
           {"attn_kl_mean", s.attn_kl_mean}}};
}
// Statistics as llama.cpp's KL-divergence report (docs/eval.md gives the formulas).
struct HeldBytes {
  std::uint64_t bytes = 0, elements = 0;          // the final state
  std::uint64_t bytes_sum = 0, elements_sum = 0;  // summed over appends
  std::int64_t k_bytes = -1;                      // the K cache's part of bytes; -1: not recorded
};
EvalSummary summarize(const TokenScores& run, const TokenScores& base, const HeldBytes& held);
// Linear interpolation between order statistics (numpy.percentile's default); fraction in [0, 1].
double percentile(std::vector<double> values, double fraction);

}  // namespace dgq::sim

#pragma once
// Attention of one probe query, with the original and with the reconstructed K/V, and the
// metrics that compare the two (docs/replay.md, "Attention metrics"). Everything is fp64
// and summed in a fixed order, so a result does not depend on threads or schedules.
#include <cstdint>
#include <span>
#include <vector>

#include "dgq/sim/metrics/probe_metrics.hpp"

namespace dgq::sim {

// Floor applied to p̂_j inside KL's logarithm, so that p̂_j = 0 with p_j > 0 (the
// reconstruction moved all mass off a key) gives a large but finite term; keys whose p_j is at
// or below it are left out of the sum (else p̂ = p would score p_j (ln p_j - ln floor) < 0).
inline constexpr double kKlProbabilityFloor = 1e-300;

// q·k in fp64: element i goes to lane i mod 8 (the fp32 products are exact in fp64), then
// the lanes are combined as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
double dot_fp64(const float* a, const float* b, std::int64_t n);

// logits[j] = (q · keys[j]) / sqrt(d) for j in [0, n); keys is [n][d] row-major.
void attention_logits(const float* q, const float* keys, std::int64_t n, std::int64_t d, std::vector<double>& logits);

// Softmax in fp64: p_j = exp(l_j - max) / Z, Z summed in index order.
void softmax(std::span<const double> logits, std::vector<double>& p);

// o[c] = sum_j p_j * values[rows[j]][c], summed over j in index order. rows == nullptr
// means rows[j] = j.
void attention_output(std::span<const double> p, const float* values, const std::int64_t* rows, std::int64_t d,
                      std::vector<double>& o);

// KL(p || p̂) = max(0, sum_{j: p_j > floor} p_j (ln p_j - ln max(p̂_j, floor))), floor =
// kKlProbabilityFloor: exactly 0 for p̂ = p, never negative (docs/replay.md).
double kl_divergence(std::span<const double> p, std::span<const double> p_hat);
// 0.5 * sum_j |p_j - p̂_j|.
double total_variation(std::span<const double> p, std::span<const double> p_hat);
// Indices of the k largest entries (k clamped to p.size()), ties to the smaller index,
// in decreasing order of p.
std::vector<std::int64_t> top_k_indices(std::span<const double> p, std::int64_t k);
// |topk(p) ∩ topk(p̂)| / k with k clamped to the number of keys; 1 for zero keys.
double top_k_recall(std::span<const double> p, std::span<const double> p_hat, std::int64_t k);
// The same from precomputed top lists (each at least min(k, n) long, best first).
double top_k_recall(std::span<const std::int64_t> top, std::span<const std::int64_t> top_hat, std::int64_t k);
// ||o - ô|| / ||o||; 0 when both are zero, +inf when only o is zero.
double relative_l2(std::span<const double> o, std::span<const double> o_hat);
// o·ô / (||o|| ||ô||); 1 when both are zero, 0 when exactly one is.
double cosine_similarity(std::span<const double> o, std::span<const double> o_hat);

// ProbeMetrics, one field per metric of the table: dgq/sim/probe_metrics.hpp.

// The same metrics over the clean (non-noise) keys only, plus the attention mass that the
// full softmax puts on noise keys with the original and with the reconstructed K.
struct NoiseProbeMetrics {
  ProbeMetrics clean;  // NaN everywhere when the causal window has no clean key
  double noise_mass = 0, noise_mass_hat = 0;
};

// One query's attention over keys/values 0..n-1: logits, softmax and output.
struct ProbeAttention {
  std::vector<double> logits, p, o;
  std::vector<std::int64_t> top;  // top_k_indices(p, kTopKMax): top-8 is its prefix
};
inline constexpr std::int64_t kTopKMax = 32;

// k and v are [n][d] row-major fp32 (the exact values of the stored dtype); n = position + 1.
void compute_probe_attention(const float* q, const float* k, const float* v, std::int64_t n, std::int64_t d,
                             ProbeAttention& out);

// All probes of one q head at once: probe t (query q + t*d) attends keys 0..q_pos[t]
// (q_pos increasing). Each value is computed exactly as compute_probe_attention does (same
// per-element operations, same summation order), but K and V are streamed once for all
// probes instead of once per probe, which is what bounds the replay's speed.
void compute_head_attention(const float* q, const float* k, const float* v, const std::int32_t* q_pos,
                            std::size_t probes, std::int64_t d, std::vector<ProbeAttention>& out);

ProbeMetrics compare_attention(const ProbeAttention& ref, const ProbeAttention& hat);

// Softmax restricted to clean keys (noise_mask[j] == 0 for j < n), recomputed from the
// logits both attentions hold, and outputs over those keys from v and v_hat.
struct NoiseScratch {
  std::vector<std::int64_t> rows;
  ProbeAttention ref, hat;
};
NoiseProbeMetrics compare_attention_noise(const ProbeAttention& ref, const ProbeAttention& hat, const float* v,
                                          const float* v_hat, std::int64_t d, const std::uint8_t* noise_mask,
                                          NoiseScratch& s);

}  // namespace dgq::sim

#pragma once
// The one table of per-probe attention metrics (docs/adding-a-metric.md). Each line of
// DGQ_PROBE_METRICS names a metric and says everything the rest of dgq needs: its unit, which
// direction is better, and how it is computed from the two attentions of a probe (`ref` with the
// original K/V, `hat` with the reconstruction; ProbeAttention, dgq/sim/metrics/attention.hpp). From it
// come the ProbeMetrics fields, the AttentionTable columns, compare_attention, the replay's
// storage, the results file's datasets (attn/<name>, clean/<name>), the summaries
// (attn_<name>, clean_<name>), `dgq metrics` and the notebooks' reader (notebooks/dgqresults.py
// reads `dgq metrics --json`). The order of the lines is the order of the datasets and summaries.
//
// A new metric: one line here plus the function it calls (attention.hpp/.cpp).
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

namespace dgq::sim {

// X(name, unit, better: lower|higher, value from ProbeAttention ref and hat, description)
#define DGQ_PROBE_METRICS(X)                                                                              \
  X(kl, "nats", lower, kl_divergence(ref.p, hat.p), "KL(p || p^) of the attention distributions")         \
  X(tv, "probability", lower, total_variation(ref.p, hat.p), "total variation 0.5 sum |p - p^|")          \
  X(top8, "fraction", higher, top_k_recall(ref.top, hat.top, 8), "recall of the 8 most attended keys")    \
  X(top32, "fraction", higher, top_k_recall(ref.top, hat.top, 32), "recall of the 32 most attended keys") \
  X(out_rel_l2, "ratio", lower, relative_l2(ref.o, hat.o), "||o - o^|| / ||o|| of the attention output")  \
  X(out_cos, "cosine", higher, cosine_similarity(ref.o, hat.o), "cosine similarity of the attention outputs")

#define DGQ_PROBE_METRIC_FIELD(name, unit, better, value, description) double name = 0;
#define DGQ_PROBE_METRIC_COLUMN(name, unit, better, value, description) std::vector<double> name;

// The metrics of one probe query.
struct ProbeMetrics {
  DGQ_PROBE_METRICS(DGQ_PROBE_METRIC_FIELD)
};

// Per-probe attention metrics, [layers][q_heads][probes] row-major, one column per metric.
struct AttentionTable {
  DGQ_PROBE_METRICS(DGQ_PROBE_METRIC_COLUMN)
  void resize(std::size_t n);
};

enum class Better : unsigned char { lower, higher };

// How every probe metric aggregates (docs/results-format.md): per (layer, q head) the mean over
// its probes; per run and per layer the summary mean, p50, p95 and max over all probes. NaN
// values (a clean-keys metric of a probe that sees no clean key) are left out of both.
enum class Aggregation : unsigned char { probe_mean_and_summary };

struct ProbeMetricInfo {
  std::string_view name;  // dataset name; summary names are attn_<name> and clean_<name>
  std::string_view unit;
  Better better;
  Aggregation aggregation;
  std::string_view description;
  double ProbeMetrics::*field;
  std::vector<double> AttentionTable::*column;
};

#define DGQ_PROBE_METRIC_INFO(name, unit, better, value, description) \
  ProbeMetricInfo{#name,                                              \
                  unit,                                               \
                  Better::better,                                     \
                  Aggregation::probe_mean_and_summary,                \
                  description,                                        \
                  &ProbeMetrics::name,                                \
                  &AttentionTable::name},
inline constexpr ProbeMetricInfo kProbeMetrics[] = {DGQ_PROBE_METRICS(DGQ_PROBE_METRIC_INFO)};
#undef DGQ_PROBE_METRIC_INFO

std::string_view better_name(Better b);  // "lower", "higher"

}  // namespace dgq::sim

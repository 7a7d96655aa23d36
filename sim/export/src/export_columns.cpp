// The documented column order of every export layout (docs/results-format.md, "Export"): the
// one list the rows, the docs and the tests follow. A column not listed (an attribute written by
// a newer dgq, a metric added later) still appears, after the listed ones of its section.
#include <algorithm>
#include <string_view>
#include <tuple>

#include "dgq/sim/metrics/probe_metrics.hpp"
#include "export_rows.hpp"

namespace dgq::sim::exporting {

namespace {

using Names = std::vector<std::string_view>;

// As the writers list them in docs/results-format.md and docs/eval.md; the provenance last.
const Names kReplayAttributes = {
    "scheme",        "scheme_family", "device",     "trace",     "trace_model",      "trace_prompt_kind",
    "trace_source",  "trace_seed",    "kv_dtype",   "tokens",    "trace_num_layers", "num_q_heads",
    "num_kv_heads",  "head_dim",      "probes",     "has_noise", "bits_per_element", "ratio",
    "mean_segments", "dgq_version",   "dgq_commit", "dgq_dirty", "config_hash"};
const Names kEvalSummary = {"tokens",         "bits_per_element",
                            "bits_averaged",  "bits_k",
                            "bits_v",         "ppl",
                            "ppl_stderr",     "dppl",
                            "dppl_stderr",    "kld_mean",
                            "kld_stderr",     "kld_median",
                            "kld_p90",        "kld_p99",
                            "kld_max",        "rms_dp",
                            "same_top1",      "attn_kl_mean",
                            "stored_bytes",   "stored_elements",
                            "held_bytes_sum", "held_elements_sum",
                            "stored_k_bytes"};
const Names kProvenance = {"dgq_version", "dgq_commit", "dgq_dirty", "config_hash"};
const Names kEvalSettings = {"model", "architecture", "model_path",       "text",    "text_kind", "noise_rate",
                             "ctx",   "chunks",       "scored_per_chunk", "add_bos", "base",      "query_rounding",
                             "cache", "keys",         "raw_dtype",        "ubatch"};
const Names kPasskeySettings = {"task",           "model", "architecture", "add_bos",   "seed",   "prompts",
                                "query_rounding", "cache", "keys",         "raw_dtype", "ubatch", "row_exact"};
const Names kPasskeyScores = {"accuracy",     "logprob_mean",    "bits_per_element", "bits_averaged",
                              "stored_bytes", "stored_elements", "held_bytes_sum",   "held_elements_sum"};
const Names kIndex = {"layer", "model_layer", "q_head", "kv_head"};
const Names kTensorTables = {"mse", "snr_db", "max_abs_err", "rel_fro", "bytes", "original_bytes", "segments"};

Names joined(std::initializer_list<const Names*> parts, Names head = {}) {
  for (const Names* p : parts) head.insert(head.end(), p->begin(), p->end());
  return head;
}

Names probe_metrics(std::string_view prefix, Names extra = {}) {
  // string_views into static storage: the names live as long as the program.
  static std::vector<std::string> storage = [] {
    std::vector<std::string> s;
    for (const char* p : {"attn_", "clean_"})
      for (const ProbeMetricInfo& m : kProbeMetrics) s.push_back(p + std::string(m.name));
    s.push_back("clean_noise_mass");
    s.push_back("clean_noise_mass_hat");
    return s;
  }();
  Names out;
  for (const std::string& s : storage)
    if (std::string_view(s).substr(0, prefix.size()) == prefix) out.push_back(s);
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

Names prefixed_tables(std::string_view role) {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> s;
    for (std::string_view t : kTensorTables) s.push_back("k_" + std::string(t));
    return s;
  }();
  static const std::vector<std::string> v = [] {
    std::vector<std::string> s;
    for (std::string_view t : kTensorTables) s.push_back("v_" + std::string(t));
    return s;
  }();
  return Names(role == "k" ? k.begin() : v.begin(), role == "k" ? k.end() : v.end());
}

// The root provenance of eval and passkey files is the whole run's: renamed file_<name> beside
// each scheme run's own.
const Names& file_provenance() {
  static const Names names = {"file_dgq_version", "file_dgq_commit", "file_dgq_dirty", "file_config_hash"};
  return names;
}

Names documented(Layout layout, Section section) {
  switch (section) {
    case Section::run: return {"run"};
    case Section::index: return kIndex;
    case Section::k: return prefixed_tables("k");
    case Section::v: return prefixed_tables("v");
    case Section::attn: return probe_metrics("attn_");
    case Section::clean: return probe_metrics("clean_");
    case Section::file:
      return joined({layout == Layout::passkey ? &kPasskeySettings : &kEvalSettings, &file_provenance()});
    case Section::attributes:
      switch (layout) {
        case Layout::replay: return kReplayAttributes;
        case Layout::eval_sweep: return joined({&kEvalSettings, &kEvalSummary, &kProvenance}, {"kind", "scheme"});
        case Layout::eval: return joined({&kEvalSummary, &kProvenance}, {"spec"});
        case Layout::passkey: return joined({&kPasskeyScores, &kProvenance}, {"spec"});
      }
  }
  return {};
}

}  // namespace

bool Column::operator<(const Column& o) const {
  return std::tie(section, rank, name) < std::tie(o.section, o.rank, o.name);
}

Column column(Layout layout, Section section, std::string name) {
  const Names names = documented(layout, section);
  const auto it = std::find(names.begin(), names.end(), name);
  const int rank = it == names.end() ? static_cast<int>(names.size()) : static_cast<int>(it - names.begin());
  return Column{section, rank, std::move(name)};
}

}  // namespace dgq::sim::exporting

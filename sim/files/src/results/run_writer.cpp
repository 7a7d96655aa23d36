// One run group of a results file (layout: docs/results-format.md).
#include "results/run_writer.hpp"

#include <cmath>
#include <limits>

#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/typed_arrays.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/files/results/run_summary.hpp"
#include "dgq/sim/metrics/probe_metrics.hpp"

namespace dgq::sim {

namespace {

using h5::Handle;
using h5::write_array;

std::vector<hsize_t> shape2(std::size_t a, std::size_t b) { return {a, b}; }

void write_tensor_table(hid_t run, const std::string& kind, const TensorTable& t, std::size_t layers, std::size_t heads,
                        const std::string& context) {
  const std::string ctx = context + "/" + kind;
  Handle g = h5::create_group(run, kind, ctx);
  const auto shape = shape2(layers, heads);
  write_array(g.get(), "mse", t.mse, shape, ctx);
  write_array(g.get(), "snr_db", t.snr_db, shape, ctx);
  write_array(g.get(), "max_abs_err", t.max_abs_err, shape, ctx);
  write_array(g.get(), "rel_fro", t.rel_fro, shape, ctx);
  write_array(g.get(), "bytes", t.bytes, shape, ctx);
  write_array(g.get(), "original_bytes", t.original_bytes, shape, ctx);
  Handle parts = h5::create_group(g.get(), "parts", ctx + "/parts");
  for (std::size_t p = 0; p < t.part_names.size(); ++p) {
    write_array(parts.get(), t.part_names[p], t.part_bytes[p], shape, ctx + "/parts");
  }
  Handle seg = h5::create_group(g.get(), "segments", ctx + "/segments");
  write_array(seg.get(), "count", t.segment_count, shape, ctx + "/segments");
  write_array(seg.get(), "edges", t.segment_edges, {t.segment_edges.size()}, ctx + "/segments");
  write_array(seg.get(), "offsets", t.segment_offsets, {t.segment_offsets.size()}, ctx + "/segments");
}

// Mean over the probes of each (layer, q head), NaN values skipped (NaN if all are, or if
// the trace has no probes).
std::vector<double> probe_means(const std::vector<double>& v, std::size_t rows, std::size_t probes) {
  std::vector<double> out(rows, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < rows && probes > 0; ++r) {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t t = 0; t < probes; ++t) {
      const double x = v[r * probes + t];
      if (std::isnan(x)) continue;
      sum += x;
      ++n;
    }
    if (n) out[r] = sum / static_cast<double>(n);
  }
  return out;
}

void write_probe_metric(hid_t group, hid_t probes_group, const std::string& name, const std::vector<double>& v,
                        std::size_t layers, std::size_t q_heads, std::size_t probes, const std::string& ctx) {
  write_array(group, name, probe_means(v, layers * q_heads, probes), shape2(layers, q_heads), ctx);
  write_array(probes_group, name, v, {layers, q_heads, probes}, ctx + "/probes");
}

void write_attention_table(hid_t run, const std::string& kind, const AttentionTable& a, std::size_t layers,
                           std::size_t q_heads, std::size_t probes, const std::string& context,
                           const std::vector<std::pair<std::string, const std::vector<double>*>>& extra = {}) {
  const std::string ctx = context + "/" + kind;
  Handle g = h5::create_group(run, kind, ctx);
  Handle p = h5::create_group(g.get(), "probes", ctx + "/probes");
  for (const ProbeMetricInfo& info : kProbeMetrics) {
    write_probe_metric(g.get(), p.get(), std::string(info.name), a.*info.column, layers, q_heads, probes, ctx);
  }
  for (const auto& [name, values] : extra)
    write_probe_metric(g.get(), p.get(), name, *values, layers, q_heads, probes, ctx);
}

void write_summaries(hid_t run, const RunSummary& s, std::size_t layers, const std::string& context) {
  Handle overall = h5::create_group(run, "summary", context + "/summary");
  Handle per_layer = h5::create_group(run, "layer_summary", context + "/layer_summary");
  h5::write_string_attribute(overall.get(), "fields", std::string(kSummaryFields));
  h5::write_string_attribute(per_layer.get(), "fields", std::string(kSummaryFields));
  for (const MetricSummary& m : s.metrics) {
    const auto a = m.overall.as_array();
    write_array(overall.get(), m.name, std::vector<double>(a.begin(), a.end()), {4}, context + "/summary");
    std::vector<double> rows;
    for (const Summary& l : m.per_layer) {
      const auto b = l.as_array();
      rows.insert(rows.end(), b.begin(), b.end());
    }
    write_array(per_layer.get(), m.name, rows, shape2(layers, 4), context + "/layer_summary");
  }
}

void write_decompressed(hid_t run, const RunResult& r, const std::string& context) {
  if (r.decompressed.empty()) return;
  Handle g = h5::create_group(run, "decompressed", context + "/decompressed");
  for (const DecompressedLayer& d : r.decompressed) {
    const std::string ctx = context + "/decompressed/" + std::to_string(d.layer);
    Handle lg = h5::create_group(g.get(), std::to_string(d.layer), ctx);
    for (const auto& [name, t] : {std::pair<const char*, const Tensor3*>{"k", &d.k}, {"v", &d.v}}) {
      Handle type = h5::float_file_type(t->dtype);
      const std::vector<hsize_t> shape = {static_cast<hsize_t>(t->heads), static_cast<hsize_t>(t->tokens),
                                          static_cast<hsize_t>(t->channels)};
      Handle ds = h5::create_dataset(lg.get(), name, type.get(), shape, {1, 1024, shape[2]}, ctx + "/" + name);
      if (!t->storage.empty()) h5::write_all(ds.get(), type.get(), t->storage.data(), ctx + "/" + name);
    }
  }
}

void write_run_attributes(hid_t g, const RunResult& r, const RunSummary& s) {
  h5::write_string_attribute(g, "scheme", r.scheme);
  h5::write_string_attribute(g, "scheme_family", r.scheme_family);
  h5::write_string_attribute(g, "device", r.device);
  h5::write_string_attribute(g, "trace", r.trace_path);
  h5::write_string_attribute(g, "trace_model", r.trace.model);
  h5::write_string_attribute(g, "trace_prompt_kind", r.trace.prompt_kind);
  h5::write_string_attribute(g, "trace_source", r.trace.source);
  if (r.trace.seed) h5::write_int_attribute(g, "trace_seed", static_cast<std::int64_t>(*r.trace.seed));
  h5::write_string_attribute(g, "kv_dtype", std::string(dtype_name(r.trace.kv_dtype)));
  h5::write_int_attribute(g, "tokens", r.trace.tokens);
  h5::write_int_attribute(g, "trace_num_layers", r.trace.num_layers);
  h5::write_int_attribute(g, "num_q_heads", r.trace.num_q_heads);
  h5::write_int_attribute(g, "num_kv_heads", r.trace.num_kv_heads);
  h5::write_int_attribute(g, "head_dim", r.trace.head_dim);
  h5::write_int_attribute(g, "probes", static_cast<std::int64_t>(r.trace.q_pos.size()));
  h5::write_int_attribute(g, "has_noise", r.has_noise ? 1 : 0);
  write_provenance_attributes(g, r.config_hash);  // dgq_version, dgq_commit, dgq_dirty, config_hash
  h5::write_double_attribute(g, "bits_per_element", s.bits_per_element);
  h5::write_double_attribute(g, "ratio", s.ratio);
  h5::write_double_attribute(g, "mean_segments", s.mean_segments);
}

// The recorded model's layer index of each replayed layer: the trace's layer_ids (a trace that
// keeps layers 0, 7, 15, 29 of a model replays them as trace layers 0..3), or the trace's own
// index when it has none (docs/results-format.md, `model_layers`).
std::vector<std::int32_t> model_layer_ids(const RunResult& r) {
  std::vector<std::int32_t> ids;
  for (const int layer : r.layers)
    ids.push_back(r.trace.layer_ids.empty() ? layer : r.trace.layer_ids.at(static_cast<std::size_t>(layer)));
  return ids;
}

}  // namespace

void write_run(hid_t file, const RunResult& r, const std::string& context) {
  const std::string ctx = context + ": /runs/" + r.name;
  const RunSummary s = summarize_run(r);
  const std::size_t layers = r.layers.size();
  const auto kvh = static_cast<std::size_t>(r.trace.num_kv_heads);
  const auto qh = static_cast<std::size_t>(r.trace.num_q_heads);
  const std::size_t probes = r.trace.q_pos.size();
  Handle runs = h5::link_exists(file, "runs") ? h5::open_group(file, "runs", context + ": /runs")
                                              : h5::create_group(file, "runs", context + ": /runs");
  Handle g = h5::create_group(runs.get(), r.name, ctx);
  h5::write_int_attribute(g.get(), "complete", 0);
  write_run_attributes(g.get(), r, s);
  write_array(g.get(), "layers", std::vector<std::int32_t>(r.layers.begin(), r.layers.end()), {layers}, ctx);
  write_array(g.get(), "model_layers", model_layer_ids(r), {layers}, ctx);
  write_array(g.get(), "q_pos", r.trace.q_pos, {probes}, ctx);
  write_tensor_table(g.get(), "k", r.k, layers, kvh, ctx);
  write_tensor_table(g.get(), "v", r.v, layers, kvh, ctx);
  write_attention_table(g.get(), "attn", r.attn, layers, qh, probes, ctx);
  if (r.has_noise) {
    write_array(g.get(), "noise_mask", r.trace.noise_mask, {r.trace.noise_mask.size()}, ctx);
    write_attention_table(g.get(), "clean", r.attn_clean, layers, qh, probes, ctx,
                          {{"noise_mass", &r.noise_mass}, {"noise_mass_hat", &r.noise_mass_hat}});
  }
  write_summaries(g.get(), s, layers, ctx);
  write_decompressed(g.get(), r, ctx);
  // Last: only now does the run count as present (docs/results-format.md, "complete").
  const hid_t attr = H5Aopen(g.get(), "complete", H5P_DEFAULT);
  h5::Handle complete(h5::check(attr, ctx + ": attribute complete"), h5::Handle::Kind::attribute);
  const std::int64_t one = 1;
  h5::check_status(H5Awrite(complete.get(), H5T_NATIVE_INT64, &one), ctx + ": attribute complete");
}

}  // namespace dgq::sim

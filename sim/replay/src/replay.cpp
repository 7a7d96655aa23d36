// The replay engine: per layer, phase A compresses and decompresses every (scheme, KV head)
// unit; phase B computes the attention of every (q head, probe) with the original and each
// scheme's reconstruction. Each unit writes only its own slots, so the results do not depend
// on the thread count or the schedule.
#include "dgq/sim/replay/replay.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <set>
#include <utility>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/metrics/attention.hpp"
#include "dgq/sim/metrics/probe_metrics.hpp"
#include "dgq/sim/metrics/reconstruction.hpp"

namespace dgq::sim {

std::vector<int> resolve_layers(const TraceMeta& meta, const std::vector<int>& requested) {
  if (requested.empty()) {
    std::vector<int> all(static_cast<std::size_t>(meta.num_layers));
    for (int i = 0; i < meta.num_layers; ++i) all[i] = i;
    return all;
  }
  std::set<int> seen;
  for (int l : requested) {
    if (l < 0 || l >= meta.num_layers) {
      throw ParameterError("--layers: layer " + std::to_string(l) + " is outside [0, " +
                           std::to_string(meta.num_layers) + ") of this trace");
    }
    if (!seen.insert(l).second) throw ParameterError("--layers: layer " + std::to_string(l) + " is listed twice");
  }
  return requested;
}

namespace {

void check_layer_shape(const TraceMeta& m, const LayerData& layer) {
  const auto probes = static_cast<std::int64_t>(m.q_pos.size());
  const auto same = [](const Tensor3& t, std::int64_t h, std::int64_t l, std::int64_t d) {
    return t.heads == h && t.tokens == l && t.channels == d;
  };
  if (!same(layer.k, m.num_kv_heads, m.tokens, m.head_dim) || !same(layer.v, m.num_kv_heads, m.tokens, m.head_dim) ||
      !same(layer.q, m.num_q_heads, probes, m.head_dim)) {
    throw InputError("replay: layer " + std::to_string(layer.layer) + " does not have the trace's shapes");
  }
}

// What one (scheme, KV head) unit of phase A produces besides the decompressed tensors.
struct UnitStorage {
  std::vector<std::pair<std::string, std::uint64_t>> parts;
  std::vector<std::uint32_t> edges;
};

void record_parts(TensorTable& table, std::size_t row, std::size_t rows_total, const UnitStorage& unit) {
  for (const auto& [name, bytes] : unit.parts) {
    auto it = std::find(table.part_names.begin(), table.part_names.end(), name);
    std::size_t index = static_cast<std::size_t>(it - table.part_names.begin());
    if (it == table.part_names.end()) {
      table.part_names.push_back(name);
      table.part_bytes.emplace_back(rows_total, 0);
    }
    table.part_bytes[index][row] = bytes;
  }
}

void record_edges(TensorTable& table, const UnitStorage& unit) {
  table.segment_edges.insert(table.segment_edges.end(), unit.edges.begin(), unit.edges.end());
  table.segment_offsets.push_back(table.segment_edges.size());
}

void allocate_tensor_table(TensorTable& t, std::size_t rows) {
  for (auto* v : {&t.mse, &t.snr_db, &t.max_abs_err, &t.rel_fro}) v->assign(rows, 0.0);
  t.bytes.assign(rows, 0);
  t.original_bytes.assign(rows, 0);
  t.segment_count.assign(rows, 0);
  t.segment_offsets.assign(1, 0);
}

// Compresses one head, decompresses it into `out`, and fills the unit's table row.
void replay_tensor(const Scheme& scheme, ConstTensor x, TensorRole role, MutTensor out, TensorTable& table,
                   std::size_t row, UnitStorage& unit, std::mutex* serialize) {
  Compressed c;
  {
    std::unique_lock lock = serialize ? std::unique_lock(*serialize) : std::unique_lock<std::mutex>();
    c = scheme.compress(x, role);
    scheme.decompress(c, out);
  }
  std::vector<float> a, b;
  to_float(x, a);
  to_float(out, b);
  const auto m = reconstruction_metrics(a.data(), b.data(), static_cast<std::int64_t>(a.size()));
  table.mse[row] = m.mse;
  table.snr_db[row] = m.snr_db;
  table.max_abs_err[row] = m.max_abs_err;
  table.rel_fro[row] = m.rel_fro;
  table.bytes[row] = c.total_bytes();
  table.original_bytes[row] = x.bytes();
  table.segment_count[row] = c.segment_edges().empty() ? 0 : static_cast<std::int32_t>(c.segment_edges().size() - 1);
  for (const Part& p : c.parts) unit.parts.emplace_back(p.name, p.bytes.size());
  if (c.diagnostics.segments) unit.edges = std::move(c.diagnostics.segments->edges);
}

void rethrow_first(const std::vector<std::exception_ptr>& errors) {
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void store_probe(AttentionTable& t, std::size_t i, const ProbeMetrics& m) {
  for (const ProbeMetricInfo& info : kProbeMetrics) (t.*info.column)[i] = m.*info.field;
}

}  // namespace

Replayer::Replayer(TraceMeta meta, std::string trace_path, std::vector<const Scheme*> schemes,
                   std::vector<std::string> run_names, ReplayOptions options)
    : meta_(std::move(meta)), schemes_(std::move(schemes)), options_(std::move(options)) {
  if (run_names.size() != schemes_.size()) throw ParameterError("replay: one run name per scheme is needed");
  if (meta_.num_kv_heads <= 0 || meta_.num_q_heads % meta_.num_kv_heads != 0) {
    throw InputError(trace_path + ": num_q_heads (" + std::to_string(meta_.num_q_heads) +
                     ") is not a multiple of num_kv_heads (" + std::to_string(meta_.num_kv_heads) + ")");
  }
  options_.layers = resolve_layers(meta_, options_.layers);
  const std::size_t nl = options_.layers.size();
  const std::size_t kv_rows = nl * static_cast<std::size_t>(meta_.num_kv_heads);
  const std::size_t probes = nl * static_cast<std::size_t>(meta_.num_q_heads) * meta_.q_pos.size();
  for (std::size_t s = 0; s < schemes_.size(); ++s) {
    RunResult r;
    r.name = run_names[s];
    r.scheme = schemes_[s]->spec();
    r.scheme_family = schemes_[s]->family();
    r.device = std::string(device_name(options_.device));
    r.trace_path = trace_path;
    r.trace = meta_;
    r.layers = options_.layers;
    r.config_hash = config_hash(replay_config_text(r.scheme, meta_, r.layers));
    allocate_tensor_table(r.k, kv_rows);
    allocate_tensor_table(r.v, kv_rows);
    r.attn.resize(probes);
    r.has_noise = !meta_.noise_mask.empty();
    if (r.has_noise) {
      r.attn_clean.resize(probes);
      r.noise_mass.assign(probes, 0.0);
      r.noise_mass_hat.assign(probes, 0.0);
    }
    runs_.push_back(std::move(r));
  }
}

int Replayer::thread_count() const { return options_.threads > 0 ? options_.threads : omp_get_max_threads(); }

void Replayer::add_layer(const LayerData& layer) {
  if (next_ >= options_.layers.size() || layer.layer != options_.layers[next_]) {
    throw ParameterError("replay: layer " + std::to_string(layer.layer) + " was not expected next");
  }
  check_layer_shape(meta_, layer);
  std::vector<Tensor3> k_hat, v_hat;  // per scheme, the trace's dtype
  for (std::size_t s = 0; s < schemes_.size(); ++s) {
    k_hat.emplace_back(layer.k.dtype, meta_.num_kv_heads, meta_.tokens, meta_.head_dim);
    v_hat.emplace_back(layer.v.dtype, meta_.num_kv_heads, meta_.tokens, meta_.head_dim);
  }
  compress_units(layer, k_hat, v_hat);
  measure_attention(layer, k_hat, v_hat);
  if (options_.keep_decompressed) {
    for (std::size_t s = 0; s < schemes_.size(); ++s) {
      runs_[s].decompressed.push_back({layer.layer, std::move(k_hat[s]), std::move(v_hat[s])});
    }
  }
  ++next_;
  if (options_.on_layer_done) options_.on_layer_done(static_cast<int>(next_), static_cast<int>(options_.layers.size()));
}

// Phase A: every (scheme, KV head) unit compressed, decompressed and measured.
void Replayer::compress_units(const LayerData& layer, std::vector<Tensor3>& k_hat, std::vector<Tensor3>& v_hat) {
  const std::size_t li = next_;
  const int kvh = meta_.num_kv_heads;
  const int units = static_cast<int>(schemes_.size()) * kvh;
  std::mutex scheme_mutex;
  std::mutex* serialize = options_.serialize_schemes ? &scheme_mutex : nullptr;
  std::vector<UnitStorage> k_units(units), v_units(units);
  std::vector<std::exception_ptr> errors(units);
  std::vector<TensorRole> failed_role(units, TensorRole::key);
#pragma omp parallel for schedule(dynamic, 1) num_threads(thread_count())
  for (int u = 0; u < units; ++u) {
    const int s = u / kvh, h = u % kvh;
    const std::size_t row = li * kvh + h;
    try {
      replay_tensor(*schemes_[s], layer.k.head(h), TensorRole::key, k_hat[s].head(h), runs_[s].k, row, k_units[u],
                    serialize);
      failed_role[u] = TensorRole::value;
      replay_tensor(*schemes_[s], layer.v.head(h), TensorRole::value, v_hat[s].head(h), runs_[s].v, row, v_units[u],
                    serialize);
    } catch (...) {
      errors[u] = std::current_exception();
    }
  }
  for (int u = 0; u < units; ++u) {  // the first failure, with file, layer, tensor, head and scheme
    if (!errors[u]) continue;
    const std::string where = runs_[u / kvh].trace_path + ": /layers/" + std::to_string(layer.layer) + "/" +
                              std::string(role_name(failed_role[u])) + ": head " + std::to_string(u % kvh) +
                              ": scheme " + schemes_[u / kvh]->spec() + ": ";
    rethrow_with_context(errors[u], where);
  }
  const std::size_t kv_rows = options_.layers.size() * kvh;
  for (int u = 0; u < units; ++u) {  // serial, in unit order: deterministic part order and edges
    RunResult& r = runs_[u / kvh];
    const std::size_t row = li * kvh + u % kvh;
    record_parts(r.k, row, kv_rows, k_units[u]);
    record_parts(r.v, row, kv_rows, v_units[u]);
    record_edges(r.k, k_units[u]);
    record_edges(r.v, v_units[u]);
  }
}

// Phase B: every q head's probes, with the original K/V and with each scheme's K̂/V̂.
void Replayer::measure_attention(const LayerData& layer, const std::vector<Tensor3>& k_hat,
                                 const std::vector<Tensor3>& v_hat) {
  const std::size_t li = next_;
  const int qh = meta_.num_q_heads;
  const int group = qh / meta_.num_kv_heads;
  const int S = static_cast<int>(schemes_.size());
  const std::size_t T = meta_.q_pos.size();
  const std::int64_t d = meta_.head_dim;
  const std::uint8_t* noise = meta_.noise_mask.empty() ? nullptr : meta_.noise_mask.data();
  std::vector<std::exception_ptr> errors(qh);
#pragma omp parallel num_threads(thread_count())
  {
    // Per-thread buffers, reused across q heads; a KV head is widened once for its q heads
    // (consecutive under the dynamic schedule more often than not).
    std::vector<float> q, k, v;
    std::vector<std::vector<float>> kh(S), vh(S);
    int converted_head = -1;
    std::vector<ProbeAttention> ref, hat;  // one per probe
    NoiseScratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int g = 0; g < qh; ++g) {
      try {
        const int h = g / group;
        to_float(layer.q.head(g), q);
        if (h != converted_head) {
          to_float(layer.k.head(h), k);
          to_float(layer.v.head(h), v);
          for (int s = 0; s < S; ++s) {
            to_float(k_hat[s].head(h), kh[s]);
            to_float(v_hat[s].head(h), vh[s]);
          }
          converted_head = h;
        }
        compute_head_attention(q.data(), k.data(), v.data(), meta_.q_pos.data(), T, d, ref);
        for (int s = 0; s < S; ++s) {
          compute_head_attention(q.data(), kh[s].data(), vh[s].data(), meta_.q_pos.data(), T, d, hat);
          for (std::size_t t = 0; t < T; ++t) {
            const std::size_t slot = (li * qh + g) * T + t;
            store_probe(runs_[s].attn, slot, compare_attention(ref[t], hat[t]));
            if (noise) {
              const auto nm = compare_attention_noise(ref[t], hat[t], v.data(), vh[s].data(), d, noise, scratch);
              store_probe(runs_[s].attn_clean, slot, nm.clean);
              runs_[s].noise_mass[slot] = nm.noise_mass;
              runs_[s].noise_mass_hat[slot] = nm.noise_mass_hat;
            }
          }
        }
      } catch (...) {
        errors[g] = std::current_exception();
      }
    }
  }
  rethrow_first(errors);
}

std::vector<RunResult> Replayer::finish() {
  if (next_ != options_.layers.size()) {
    throw ParameterError("replay: " + std::to_string(options_.layers.size() - next_) + " layer(s) were not replayed");
  }
  return std::move(runs_);
}

std::vector<RunResult> replay_trace(const TraceReader& reader, const std::vector<const Scheme*>& schemes,
                                    const std::vector<std::string>& run_names, const ReplayOptions& options) {
  Replayer replayer(reader.meta(), reader.path(), schemes, run_names, options);
  for (int l : resolve_layers(reader.meta(), options.layers)) replayer.add_layer(reader.read_layer(l));
  return replayer.finish();
}

}  // namespace dgq::sim

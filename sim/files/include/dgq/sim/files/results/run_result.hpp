#pragma once
// What a results file holds of one replay run (docs/results-format.md): the scheme, the trace,
// per layer and KV head its reconstruction error and bytes, per probe its attention metrics.
// dgq replay and dgq sweep compute it (dgq/sim/replay/replay.hpp); results_file.hpp writes it.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/files/trace.hpp"
#include "dgq/sim/metrics/probe_metrics.hpp"
#include "dgq/tensor.hpp"

namespace dgq::sim {

// Reconstruction and storage of one tensor kind (K or V); tables are [layers][kv_heads]
// row-major, layers in the order replayed.
struct TensorTable {
  std::vector<double> mse, snr_db, max_abs_err, rel_fro;
  std::vector<std::uint64_t> bytes;                    // Compressed::total_bytes()
  std::vector<std::uint64_t> original_bytes;           // tokens * head_dim * size of the trace's dtype
  std::vector<std::string> part_names;                 // in order of first appearance
  std::vector<std::vector<std::uint64_t>> part_bytes;  // [part][layers*kv_heads], 0 if absent
  std::vector<std::int32_t> segment_count;             // edges - 1; 0 for schemes that do not segment
  // Segment edges [0, ..., L] of unit u = layer*kv_heads + head are
  // segment_edges[segment_offsets[u] .. segment_offsets[u+1]).
  std::vector<std::uint32_t> segment_edges;
  std::vector<std::uint64_t> segment_offsets;
};

// AttentionTable (per-probe attention metrics, one column per metric): dgq/sim/metrics/probe_metrics.hpp.

// The decompressed K and V of one replayed layer, kept on request for cross-checks.
struct DecompressedLayer {
  int layer = 0;
  Tensor3 k, v;  // the trace's dtype
};

struct RunResult {
  std::string name;
  std::string scheme;  // canonical spec
  std::string scheme_family;
  std::string device = "cpu";  // where the scheme ran: cpu, reference or cuda (ReplayOptions)
  std::string trace_path;
  TraceMeta trace;          // the trace's metadata (q_pos, noise_mask included)
  std::vector<int> layers;  // replayed layer indices, in order
  TensorTable k, v;
  AttentionTable attn;
  bool has_noise = false;  // the trace has /noise_mask: the fields below are filled
  AttentionTable attn_clean;
  std::vector<double> noise_mass, noise_mass_hat;  // [layers][q_heads][probes]
  std::vector<DecompressedLayer> decompressed;     // only with ReplayOptions::keep_decompressed
  std::string config_hash;                         // config_hash(replay_config_text(scheme, trace, layers))
};

// "<spec>@<trace stem>" with every character outside [A-Za-z0-9._=,@+-] replaced by '_'
// (HDF5 group names must not contain '/').
std::string default_run_name(const std::string& scheme_spec, const std::string& trace_path);
std::string sanitize_run_name(const std::string& name);

}  // namespace dgq::sim

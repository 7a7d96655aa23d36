#pragma once
// The replay simulator (docs/replay.md): every layer of a trace through one or more schemes,
// measuring reconstruction and attention error per layer, head and probe. Layers stream in
// one at a time; all schemes share each layer read.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/sim/probe_metrics.hpp"
#include "dgq/sim/trace.hpp"

namespace dgq::sim {

// Reconstruction and storage of one tensor kind (K or V); tables are [layers][kv_heads]
// row-major, layers in the order replayed.
struct TensorTable {
  std::vector<double> mse, snr_db, max_abs_err, rel_fro;
  std::vector<std::uint64_t> bytes;           // Compressed::total_bytes()
  std::vector<std::uint64_t> original_bytes;  // tokens * head_dim * size of the trace's dtype
  std::vector<std::string> part_names;        // in order of first appearance
  std::vector<std::vector<std::uint64_t>> part_bytes;  // [part][layers*kv_heads], 0 if absent
  std::vector<std::int32_t> segment_count;    // edges - 1; 0 for schemes that do not segment
  // Segment edges [0, ..., L] of unit u = layer*kv_heads + head are
  // segment_edges[segment_offsets[u] .. segment_offsets[u+1]).
  std::vector<std::uint32_t> segment_edges;
  std::vector<std::uint64_t> segment_offsets;
};

// AttentionTable (per-probe attention metrics, one column per metric): dgq/sim/probe_metrics.hpp.

// The decompressed K and V of one replayed layer, kept on request for cross-checks.
struct DecompressedLayer {
  int layer = 0;
  Tensor3 k, v;  // the trace's dtype
};

struct RunResult {
  std::string name;
  std::string scheme;         // canonical spec
  std::string scheme_family;
  std::string device = "cpu";  // where the scheme ran: cpu, reference or cuda (ReplayOptions)
  std::string trace_path;
  TraceMeta trace;            // the trace's metadata (q_pos, noise_mask included)
  std::vector<int> layers;    // replayed layer indices, in order
  TensorTable k, v;
  AttentionTable attn;
  bool has_noise = false;     // the trace has /noise_mask: the fields below are filled
  AttentionTable attn_clean;
  std::vector<double> noise_mass, noise_mass_hat;  // [layers][q_heads][probes]
  std::vector<DecompressedLayer> decompressed;      // only with ReplayOptions::keep_decompressed
  std::string config_hash;    // config_hash(replay_config_text(scheme, trace, layers))
};

struct ReplayOptions {
  int threads = 0;                  // 0: OpenMP's default
  std::vector<int> layers;          // empty: all layers
  bool keep_decompressed = false;   // fill RunResult::decompressed (memory: one trace per scheme)
  bool serialize_schemes = false;   // call compress/decompress from one thread at a time (GPU schemes)
  std::string device = "cpu";       // recorded in every RunResult (the schemes were made for it)
  std::function<void(int done, int total)> on_layer_done;  // progress
};

// Checks a layer list against the trace (range, duplicates) and returns it, or all layers.
std::vector<int> resolve_layers(const TraceMeta& meta, const std::vector<int>& requested);

// The canonical configuration of a replay run (docs/results-format.md, "Provenance"):
// "replay", the canonical scheme spec, the replayed layers (resolved, in order) and
// trace_identity_text(trace). Threads, device and paths are not part of it: they do not
// change the numbers.
std::string replay_config_text(const std::string& scheme_spec, const TraceMeta& trace, const std::vector<int>& layers);

// Streams layers and accumulates results, one RunResult per scheme. Usable without files:
// feed LayerData for the layers in `layers` order.
class Replayer {
 public:
  Replayer(TraceMeta meta, std::string trace_path, std::vector<const Scheme*> schemes,
           std::vector<std::string> run_names, ReplayOptions options);
  void add_layer(const LayerData& layer);  // the next layer of options.layers (or 0, 1, ...)
  std::vector<RunResult> finish();          // all layers must have been added

 private:
  int thread_count() const;
  void compress_units(const LayerData& layer, std::vector<Tensor3>& k_hat, std::vector<Tensor3>& v_hat);
  void measure_attention(const LayerData& layer, const std::vector<Tensor3>& k_hat, const std::vector<Tensor3>& v_hat);

  TraceMeta meta_;
  std::vector<const Scheme*> schemes_;
  ReplayOptions options_;
  std::vector<RunResult> runs_;
  std::size_t next_ = 0;
};

// Replays every requested layer of a trace file through the schemes.
std::vector<RunResult> replay_trace(const TraceReader& reader, const std::vector<const Scheme*>& schemes,
                                    const std::vector<std::string>& run_names, const ReplayOptions& options);

// "<spec>@<trace stem>" with every character outside [A-Za-z0-9._=,@+-] replaced by '_'
// (HDF5 group names must not contain '/').
std::string default_run_name(const std::string& scheme_spec, const std::string& trace_path);
std::string sanitize_run_name(const std::string& name);

}  // namespace dgq::sim

namespace dgq::sim {

enum class ReplayDevice { cpu, cuda, reference };
ReplayDevice parse_replay_device(std::string_view s);  // "cpu" | "reference" | "cuda"; throws ParameterError

// make_scheme, except that ReplayDevice::reference runs every family's literal reference
// (make_scheme(spec, Device::reference)) and with ReplayDevice::cuda the dgq family runs on the GPU
// (dgq::cuda::make_cuda_scheme). Throws dgq::Error when this build has no CUDA or no device
// is usable; other families always run on the CPU.
std::unique_ptr<Scheme> make_replay_scheme(std::string_view spec, ReplayDevice device);

}  // namespace dgq::sim

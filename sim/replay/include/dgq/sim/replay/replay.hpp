#pragma once
// The replay simulator (docs/replay.md): every layer of a trace through one or more schemes,
// measuring reconstruction and attention error per layer, head and probe. Layers stream in
// one at a time; all schemes share each layer read.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/files/results/run_result.hpp"
#include "dgq/sim/files/trace.hpp"

namespace dgq::sim {

struct ReplayOptions {
  int threads = 0;                 // 0: OpenMP's default
  std::vector<int> layers;         // empty: all layers
  bool keep_decompressed = false;  // fill RunResult::decompressed (memory: one trace per scheme)
  bool serialize_schemes = false;  // call compress/decompress from one thread at a time (GPU schemes)
  Device device = Device::cpu;     // recorded in every RunResult (the schemes were made for it)
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
  std::vector<RunResult> finish();         // all layers must have been added

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

}  // namespace dgq::sim

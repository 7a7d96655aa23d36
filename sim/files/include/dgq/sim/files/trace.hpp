#pragma once
// Attention traces, format v1 (docs/trace-format.md): recorded or synthetic Q/K/V per layer
// and KV head, stored in HDF5. Reading is streamed: one layer at a time.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq::sim {

struct TraceMeta {
  std::string model;
  int num_layers = 0;
  int num_q_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  bool rope_applied = true;
  std::string source = "synthetic";      // "synthetic" or "model"
  std::string prompt_kind;               // free text: code, prose, legal, poetry, ...
  std::optional<std::uint64_t> seed;     // synthetic traces only
  std::int64_t tokens = 0;               // L
  DType kv_dtype = DType::f16;           // dtype of /layers/<i>/k and v (f16 or f32)
  std::vector<std::int32_t> q_pos;       // [T] probe positions
  std::vector<std::int32_t> token_ids;   // optional /tokens, empty if absent
  std::vector<std::uint8_t> noise_mask;  // optional /noise_mask, empty if absent
  std::string text;                      // optional /text
  // Optional root attribute `layer_ids` [num_layers]: the recorded model's index of each
  // stored layer (a trace of layers 0,7,15,29 of a 30-layer model); empty if absent.
  std::vector<int> layer_ids;
  // Synthetic traces of `dgq gen-trace` (root attributes `generator_version`,
  // `generator_options`): the generator's version (synth.hpp, kGeneratorVersion) and the
  // canonical text of the options it was given. Absent (nullopt, "") in recorded traces and
  // in traces generated before dgq recorded them.
  std::optional<std::int64_t> generator_version;
  std::string generator_options;
};

// The canonical text that stands for a trace in a run's configuration (docs/results-format.md,
// "Provenance"): its metadata (model, source, prompt kind, seed, shape, tokens, K/V dtype,
// generator version and options) and hashes of q_pos, the noise mask, the token ids, the layer
// ids and the text. K/V values are not read (that would cost a whole pass over the trace), so
// two traces that differ only in their values have the same text.
std::string trace_identity_text(const TraceMeta& meta);

struct LayerData {
  int layer = 0;
  Tensor3 k;  // [num_kv_heads][L][head_dim], kv_dtype
  Tensor3 v;  // same
  Tensor3 q;  // [num_q_heads][T][head_dim], stored dtype
};

// Opens and validates a trace file (attributes, dataset presence, ranks, shapes, dtypes).
// Throws dgq::InputError naming the file, the dataset and, for bad values, the index.
class TraceReader {
 public:
  explicit TraceReader(const std::string& path);
  ~TraceReader();
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;

  const std::string& path() const;
  const TraceMeta& meta() const;
  // Reads one layer; checks every value is finite (error names dataset, head, token, channel).
  LayerData read_layer(int layer) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes a trace to PATH.partial and renames it to PATH in finish(); a writer destroyed
// without finish() removes the partial file, so no half-written trace looks complete.
// The root records this build (dgq_version, dgq_commit, dgq_dirty) and, when given, the
// config_hash of what produced the trace (generation, decompression).
class TraceWriter {
 public:
  TraceWriter(const std::string& path, const TraceMeta& meta, const std::string& config_hash = "");
  ~TraceWriter();
  void write_layer(const LayerData& layer);  // layers may come in any order, each once
  void finish();                             // all num_layers layers must have been written

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dgq::sim

#pragma once
// Compressed traces (docs/compressed-format.md): a trace v1 whose K and V are stored as a
// scheme's Parts, per layer, tensor and KV head. `dgq compress` writes them, `dgq decompress`
// turns them back into a full trace v1, `dgq inspect` reports their segments and bytes.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/files/trace.hpp"

namespace dgq::sim {

inline constexpr const char* kCompressedFormat = "dgq-compressed";

struct CompressionSummary {
  std::string scheme;  // canonical spec
  int layers = 0;
  int kv_heads = 0;
  std::int64_t tokens = 0;
  int head_dim = 0;
  DType dtype = DType::f16;
  std::uint64_t input_bytes = 0;                                  // K and V, input dtype
  std::vector<std::pair<std::string, std::uint64_t>> part_bytes;  // in order of first appearance
  std::uint64_t stored_bytes = 0;                                 // sum of part_bytes
  double mean_segments = 0.0;  // over all (layer, tensor, head) units; 0 for schemes without segments
  double ratio() const {
    return stored_bytes ? static_cast<double>(input_bytes) / static_cast<double>(stored_bytes) : 0.0;
  }
};

// Compresses every layer/tensor/head of the trace with `scheme` (OpenMP over heads with
// `threads` threads, 0 = OpenMP's default; the output bytes do not depend on it). Writes
// out_path.partial and renames it on success. `progress`: a unit is a layer.
CompressionSummary compress_trace(const std::string& trace_path, const std::string& out_path, const Scheme& scheme,
                                  int threads = 0, ProgressMode progress = ProgressMode::off);

// Reads a compressed file back; validation like TraceReader (errors name file and dataset).
class CompressedReader {
 public:
  explicit CompressedReader(const std::string& path);
  ~CompressedReader();
  CompressedReader(CompressedReader&&) noexcept;
  CompressedReader& operator=(CompressedReader&&) noexcept;

  const std::string& path() const;
  const TraceMeta& meta() const;      // the original trace's metadata (tokens, kv_dtype, q_pos, ...)
  const std::string& scheme() const;  // canonical spec of the scheme that made it
  // One unit, with its segment diagnostics (Compressed::diagnostics) read back from the stored attribute.
  Compressed read_unit(int layer, TensorRole role, int head) const;
  Tensor3 read_queries(int layer) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Decompresses into a trace v1 (same kv dtype as the original; out_path.partial, renamed on
// success). The scheme comes from the file; decompression runs on the CPU reference.
// `progress`: a unit is a layer.
void decompress_to_trace(const std::string& compressed_path, const std::string& out_path, int threads = 0,
                         ProgressMode progress = ProgressMode::off);

// True when the file's root attribute format is "dgq-compressed" (false for traces; throws
// InputError for unreadable files).
bool is_compressed_file(const std::string& path);

}  // namespace dgq::sim

// `dgq decompress`: a compressed file back to a full trace v1.
#include <omp.h>

#include <exception>

#include "compressed/decompress_layer.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "trace/trace_layout.hpp"

namespace dgq::sim {

LayerData decompress_layer(const CompressedReader& reader, const Scheme& scheme, int layer, int threads) {
  const TraceMeta& meta = reader.meta();
  const std::string& path = reader.path();
  const int heads = meta.num_kv_heads;
  // HDF5 reads stay on this thread; only the decoding runs in parallel. Every unit is read
  // (and its shape checked against its stored bytes) before the layer is allocated.
  std::vector<Compressed> units;
  for (TensorRole role : {TensorRole::key, TensorRole::value})
    for (int head = 0; head < heads; ++head) units.push_back(reader.read_unit(layer, role, head));
  LayerData data;
  data.layer = layer;
  data.k = Tensor3(meta.kv_dtype, heads, meta.tokens, meta.head_dim);
  data.v = Tensor3(meta.kv_dtype, heads, meta.tokens, meta.head_dim);
  data.q = reader.read_queries(layer);
  std::vector<std::exception_ptr> errors(units.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int u = 0; u < 2 * heads; ++u) {
    try {
      Tensor3& target = u < heads ? data.k : data.v;
      scheme.decompress(units[u], target.head(u % heads));
    } catch (...) {
      errors[u] = std::current_exception();
    }
  }
  for (int u = 0; u < 2 * heads; ++u) {
    if (!errors[u]) continue;
    try {
      std::rethrow_exception(errors[u]);
    } catch (const Error& e) {
      throw InputError(path + ": /layers/" + std::to_string(layer) + "/" + (u < heads ? "k/" : "v/") +
                       std::to_string(u % heads) + ": " + e.what());
    }
  }
  // Stored ranges or scales that are NaN/Inf decode to non-finite values: refuse them here,
  // naming the unit, rather than write a trace that the trace reader rejects.
  for (const Tensor3* t : {&data.k, &data.v})
    layout::check_finite(*t, path + ": /layers/" + std::to_string(layer) + "/" + (t == &data.k ? "k" : "v") +
                                 " decoded (stored ranges or scales not finite?)");
  return data;
}

void decompress_to_trace(const std::string& compressed_path, const std::string& out_path, int threads,
                         ProgressMode progress_mode) {
  if (threads < 0 || threads > 1024)
    throw ParameterError("--threads must be in [0, 1024], got " + std::to_string(threads));
  const int team = threads > 0 ? threads : omp_get_max_threads();
  CompressedReader reader(compressed_path);
  const TraceMeta& meta = reader.meta();
  const auto scheme = make_scheme(reader.scheme());
  TraceWriter writer(out_path, meta,
                     config_hash("decompress\nscheme=" + reader.scheme() + "\n" + trace_identity_text(meta)));
  Progress progress(progress_mode, "decompress " + compressed_path, meta.num_layers);
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    writer.write_layer(decompress_layer(reader, *scheme, layer, team));
    progress.finished("layer(s)");
  }
  writer.finish();
}

}  // namespace dgq::sim

// `dgq decompress`: a compressed file back to a full trace v1.
#include <omp.h>

#include <exception>

#include "dgq/errors.hpp"
#include "dgq/sim/compressed.hpp"

namespace dgq::sim {

void decompress_to_trace(const std::string& compressed_path, const std::string& out_path, int threads) {
  if (threads < 0) throw ParameterError("--threads must be >= 0, got " + std::to_string(threads));
  const int team = threads > 0 ? threads : omp_get_max_threads();
  CompressedReader reader(compressed_path);
  const TraceMeta& meta = reader.meta();
  const auto scheme = make_scheme(reader.scheme());
  TraceWriter writer(out_path, meta);
  const int heads = meta.num_kv_heads;
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    // HDF5 reads stay on this thread; only the decoding runs in parallel.
    std::vector<Compressed> units;
    for (TensorRole role : {TensorRole::key, TensorRole::value})
      for (int head = 0; head < heads; ++head) units.push_back(reader.read_unit(layer, role, head));
    LayerData data;
    data.layer = layer;
    data.k = Tensor3(meta.kv_dtype, heads, meta.tokens, meta.head_dim);
    data.v = Tensor3(meta.kv_dtype, heads, meta.tokens, meta.head_dim);
    data.q = reader.read_queries(layer);
    std::vector<std::exception_ptr> errors(units.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (int u = 0; u < 2 * heads; ++u) {
      try {
        Tensor3& target = u < heads ? data.k : data.v;
        scheme->decompress(units[u], target.head(u % heads));
      } catch (...) {
        errors[u] = std::current_exception();
      }
    }
    for (int u = 0; u < 2 * heads; ++u) {
      if (!errors[u]) continue;
      try {
        std::rethrow_exception(errors[u]);
      } catch (const Error& e) {
        throw InputError(compressed_path + ": /layers/" + std::to_string(layer) + "/" + (u < heads ? "k/" : "v/") +
                         std::to_string(u % heads) + ": " + e.what());
      }
    }
    writer.write_layer(data);
  }
  writer.finish();
}

}  // namespace dgq::sim

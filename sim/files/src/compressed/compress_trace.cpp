// `dgq compress`: a trace v1 in, a compressed file out, one layer in memory at a time.
#include <omp.h>

#include <algorithm>
#include <exception>

#include "compressed/compressed_layout.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "trace/trace_layout.hpp"

namespace dgq::sim {

namespace {

void write_unit(hid_t file, int layer, int head, const Compressed& c) {
  const std::string group_path = compressed::unit_group(layer, c.role, head);
  h5::Handle group = h5::create_group(file, group_path, group_path);
  h5::write_int_attribute(group.get(), compressed::kAttrTokens, c.tokens);
  h5::write_int_attribute(group.get(), compressed::kAttrChannels, c.channels);
  h5::write_string_attribute(group.get(), compressed::kAttrDtype, std::string(dtype_name(c.dtype)));
  std::string names;
  for (const Part& part : c.parts) names += (names.empty() ? "" : ",") + part.name;
  h5::write_string_attribute(group.get(), compressed::kAttrParts, names);
  h5::write_int_array_attribute(group.get(), compressed::kAttrSegmentEdges,
                                std::vector<std::int64_t>(c.segment_edges().begin(), c.segment_edges().end()));
  for (const Part& part : c.parts) {
    const std::string context = group_path + "/" + part.name;
    // Contiguous and unfiltered: the file holds the scheme's bytes as they are.
    h5::Handle ds = h5::create_dataset(group.get(), part.name, H5T_STD_U8LE, {part.bytes.size()}, {}, context);
    h5::write_all(ds.get(), H5T_NATIVE_UINT8, part.bytes.data(), context);
    h5::write_int_attribute(ds.get(), compressed::kAttrTokens, c.tokens);
    h5::write_int_attribute(ds.get(), compressed::kAttrChannels, c.channels);
    h5::write_string_attribute(ds.get(), compressed::kAttrDtype, std::string(dtype_name(c.dtype)));
  }
}

// Compresses all 2 x kv_heads units of one layer in parallel; unit u = role * heads + head.
std::vector<Compressed> compress_layer(const LayerData& data, const Scheme& scheme, int threads,
                                       const std::string& trace_path) {
  const int heads = static_cast<int>(data.k.heads);
  std::vector<Compressed> out(2 * heads);
  std::vector<std::exception_ptr> errors(out.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int u = 0; u < 2 * heads; ++u) {
    try {
      const TensorRole role = u < heads ? TensorRole::key : TensorRole::value;
      const Tensor3& tensor = role == TensorRole::key ? data.k : data.v;
      out[u] = scheme.compress(tensor.head(u % heads), role);
    } catch (...) {
      errors[u] = std::current_exception();
    }
  }
  for (int u = 0; u < 2 * heads; ++u) {
    if (!errors[u]) continue;
    const std::string where = trace_path + ": " + layout::layer_dataset(data.layer, u < heads ? "k" : "v") + ": head " +
                              std::to_string(u % heads) + ": ";
    rethrow_with_context(errors[u], where);
  }
  return out;
}

void add_to_summary(CompressionSummary& s, const Compressed& c, std::int64_t& segment_units, double& segments) {
  for (const Part& part : c.parts) {
    auto it =
        std::find_if(s.part_bytes.begin(), s.part_bytes.end(), [&](const auto& p) { return p.first == part.name; });
    if (it == s.part_bytes.end()) it = s.part_bytes.insert(s.part_bytes.end(), {part.name, 0});
    it->second += part.bytes.size();
    s.stored_bytes += part.bytes.size();
  }
  if (!c.segment_edges().empty()) {
    segments += static_cast<double>(c.segment_edges().size() - 1);
    ++segment_units;
  }
}

}  // namespace

CompressionSummary compress_trace(const std::string& trace_path, const std::string& out_path, const Scheme& scheme,
                                  int threads, ProgressMode progress_mode) {
  if (threads < 0 || threads > 1024)
    throw ParameterError("--threads must be in [0, 1024], got " + std::to_string(threads));
  const int team = threads > 0 ? threads : omp_get_max_threads();
  TraceReader reader(trace_path);
  const TraceMeta& meta = reader.meta();
  CompressionSummary summary;
  summary.scheme = scheme.spec();
  summary.layers = meta.num_layers;
  summary.kv_heads = meta.num_kv_heads;
  summary.tokens = meta.tokens;
  summary.head_dim = meta.head_dim;
  summary.dtype = meta.kv_dtype;

  h5::PartialOutput out(out_path);
  const hid_t file = out.file();
  layout::write_meta_attributes(file, meta, kCompressedFormat);
  h5::write_string_attribute(file, compressed::kAttrScheme, summary.scheme);
  h5::write_int_attribute(file, compressed::kAttrTokens, meta.tokens);
  h5::write_string_attribute(file, compressed::kAttrKvDtype, std::string(dtype_name(meta.kv_dtype)));
  // The bytes depend on the scheme and the trace only (not on --threads).
  write_provenance_attributes(file,
                              config_hash("compress\nscheme=" + summary.scheme + "\n" + trace_identity_text(meta)));
  layout::write_aux_datasets(file, meta, out_path);
  h5::create_group(file, "/layers", out_path);

  std::int64_t segment_units = 0;
  double segments = 0.0;
  Progress progress(progress_mode, "compress " + trace_path, meta.num_layers);
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    const LayerData data = reader.read_layer(layer);
    const auto units = compress_layer(data, scheme, team, trace_path);
    h5::Handle group = h5::create_group(file, layout::layer_group(layer), out_path);
    h5::create_group(group.get(), "k", out_path);
    h5::create_group(group.get(), "v", out_path);
    layout::write_tensor3(group.get(), "q", data.q, out_path + ": " + layout::layer_dataset(layer, "q"));
    for (std::size_t u = 0; u < units.size(); ++u) {
      write_unit(file, layer, static_cast<int>(u % meta.num_kv_heads), units[u]);
      add_to_summary(summary, units[u], segment_units, segments);
    }
    summary.input_bytes += data.k.storage.size() + data.v.storage.size();
    progress.finished("layer(s)");
  }
  summary.mean_segments = segment_units ? segments / static_cast<double>(segment_units) : 0.0;
  out.commit();
  return summary;
}

}  // namespace dgq::sim

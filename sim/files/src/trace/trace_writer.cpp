// TraceWriter: everything goes to PATH.partial (h5::PartialOutput); finish() closes the file
// and renames it, so a trace under its final name is always complete.
#include <set>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/files/trace.hpp"
#include "trace/trace_layout.hpp"

namespace dgq::sim {

struct TraceWriter::Impl {
  Impl(const std::string& file, const TraceMeta& trace_meta) : path(file), meta(trace_meta), out(file) {}
  std::string path;
  TraceMeta meta;
  h5::PartialOutput out;  // removes PATH.partial unless finish() commits it
  std::set<int> written;
  bool finished = false;
};

namespace {
void check_shape(const Tensor3& t, std::int64_t heads, std::int64_t tokens, std::int64_t dim, const std::string& what) {
  if (t.heads != heads || t.tokens != tokens || t.channels != dim)
    throw ParameterError(what + ": expected shape [" + std::to_string(heads) + ", " + std::to_string(tokens) + ", " +
                         std::to_string(dim) + "], got [" + std::to_string(t.heads) + ", " + std::to_string(t.tokens) +
                         ", " + std::to_string(t.channels) + "]");
  if (t.storage.size() != static_cast<std::size_t>(heads * tokens * dim) * dtype_size(t.dtype))
    throw ParameterError(what + ": storage size does not match its shape");
}
}  // namespace

TraceWriter::TraceWriter(const std::string& path, const TraceMeta& meta, const std::string& config_hash)
    : impl_((layout::validate_meta_for_writing(meta), std::make_unique<Impl>(path, meta))) {
  const hid_t file = impl_->out.file();
  layout::write_meta_attributes(file, meta, layout::kTraceFormat);
  if (config_hash.empty())
    write_build_attributes(file);
  else
    write_provenance_attributes(file, config_hash);
  layout::write_aux_datasets(file, meta, path);
  h5::create_group(file, "/layers", path);
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::write_layer(const LayerData& layer) {
  const TraceMeta& meta = impl_->meta;
  const std::string what = impl_->path + ": " + layout::layer_group(layer.layer);
  if (impl_->finished) throw ParameterError(what + ": trace already finished");
  if (layer.layer < 0 || layer.layer >= meta.num_layers)
    throw ParameterError(what + ": layer outside [0, " + std::to_string(meta.num_layers) + ")");
  if (impl_->written.count(layer.layer)) throw ParameterError(what + ": layer written twice");
  check_shape(layer.k, meta.num_kv_heads, meta.tokens, meta.head_dim, what + "/k");
  check_shape(layer.v, meta.num_kv_heads, meta.tokens, meta.head_dim, what + "/v");
  check_shape(layer.q, meta.num_q_heads, static_cast<std::int64_t>(meta.q_pos.size()), meta.head_dim, what + "/q");
  if (layer.k.dtype != meta.kv_dtype || layer.v.dtype != meta.kv_dtype)
    throw ParameterError(what + ": k/v dtype differs from the trace's kv dtype " +
                         std::string(dtype_name(meta.kv_dtype)));
  const hid_t file = impl_->out.file();
  h5::Handle group = h5::create_group(file, layout::layer_group(layer.layer), impl_->path);
  layout::write_tensor3(group.get(), "k", layer.k, what + "/k");
  layout::write_tensor3(group.get(), "v", layer.v, what + "/v");
  layout::write_tensor3(group.get(), "q", layer.q, what + "/q");
  impl_->written.insert(layer.layer);
}

void TraceWriter::finish() {
  if (impl_->finished) return;
  const int count = static_cast<int>(impl_->written.size());
  if (count != impl_->meta.num_layers)
    throw ParameterError(impl_->path + ": finish() after " + std::to_string(count) + " of " +
                         std::to_string(impl_->meta.num_layers) + " layers");
  impl_->out.commit();  // remembered as written here: a sweep's synthetic trace is read back at once
  impl_->finished = true;
}

}  // namespace dgq::sim

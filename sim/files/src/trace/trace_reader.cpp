// TraceReader: validates the whole layout on open (cheap: metadata only), then reads one
// layer at a time on demand.
#include "dgq/errors.hpp"
#include "dgq/sim/files/trace.hpp"
#include "trace/trace_layout.hpp"

namespace dgq::sim {

struct TraceReader::Impl {
  std::string path;
  h5::Handle file;
  TraceMeta meta;
};

namespace {
std::string where(const std::string& path, int layer, const char* name) {
  return path + ": " + layout::layer_dataset(layer, name);
}

// Every layer's k, v and q (meta.tokens and kv_dtype already taken from /layers/0/k): present, rank 3, shape, f16/f32;
// k and v share one dtype.
void validate_layers(hid_t file, TraceMeta& meta, const std::string& path) {
  const std::int64_t kv = meta.num_kv_heads, hd = meta.head_dim;
  const DType first = meta.kv_dtype;  // from /layers/0/k
  const std::int64_t probes = static_cast<std::int64_t>(meta.q_pos.size());
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    for (const char* name : {"k", "v"}) {
      const DType dtype = layout::check_tensor3(file, layout::layer_dataset(layer, name), {kv, meta.tokens, hd},
                                                where(path, layer, name));
      if (dtype != first)
        throw InputError(where(path, layer, name) + ": dtype " + std::string(dtype_name(dtype)) +
                         " differs from /layers/0/k (" + std::string(dtype_name(first)) + ")");
    }
    layout::check_tensor3(file, layout::layer_dataset(layer, "q"), {meta.num_q_heads, probes, hd},
                          where(path, layer, "q"));
  }
}
}  // namespace

TraceReader::TraceReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->file = h5::open_file_readonly(path);
  const hid_t file = impl_->file.get();
  impl_->meta = layout::read_meta_attributes(file, path, layout::kTraceFormat);
  // L comes from /layers/0/k, which the aux datasets are checked against, and T from /q_pos,
  // which the q datasets are checked against: read the shape of k first, q_pos next.
  if (!h5::link_exists(file, "/layers")) throw InputError(path + ": group /layers is missing");
  {
    const DType dtype = layout::check_tensor3(
        file, layout::layer_dataset(0, "k"), {impl_->meta.num_kv_heads, -1, impl_->meta.head_dim}, where(path, 0, "k"));
    h5::Handle k0 = h5::open_dataset(file, layout::layer_dataset(0, "k"), where(path, 0, "k"));
    impl_->meta.tokens = static_cast<std::int64_t>(h5::dataset_shape(k0.get())[1]);
    impl_->meta.kv_dtype = dtype;
  }
  layout::read_aux_datasets(file, impl_->meta, path);
  validate_layers(file, impl_->meta, path);
}

TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

const std::string& TraceReader::path() const { return impl_->path; }
const TraceMeta& TraceReader::meta() const { return impl_->meta; }

LayerData TraceReader::read_layer(int layer) const {
  const TraceMeta& meta = impl_->meta;
  if (layer < 0 || layer >= meta.num_layers)
    throw InputError(impl_->path + ": layer " + std::to_string(layer) + " is outside [0, " +
                     std::to_string(meta.num_layers) + ")");
  LayerData out;
  out.layer = layer;
  const hid_t file = impl_->file.get();
  out.k = layout::read_tensor3(file, layout::layer_dataset(layer, "k"), where(impl_->path, layer, "k"));
  out.v = layout::read_tensor3(file, layout::layer_dataset(layer, "v"), where(impl_->path, layer, "v"));
  out.q = layout::read_tensor3(file, layout::layer_dataset(layer, "q"), where(impl_->path, layer, "q"));
  layout::check_finite(out.k, where(impl_->path, layer, "k"));
  layout::check_finite(out.v, where(impl_->path, layer, "v"));
  layout::check_finite(out.q, where(impl_->path, layer, "q"));
  return out;
}

}  // namespace dgq::sim

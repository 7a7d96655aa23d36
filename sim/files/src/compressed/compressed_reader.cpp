// Reading compressed files: the trace metadata, the scheme, and one unit's parts at a time.
#include "compressed/compressed_layout.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "trace/trace_layout.hpp"

namespace dgq::sim {

struct CompressedReader::Impl {
  std::string path;
  h5::Handle file;
  TraceMeta meta;
  std::string scheme;
};

namespace {
std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= joined.size() && !joined.empty()) {
    const std::size_t comma = joined.find(',', start);
    names.push_back(joined.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

std::vector<std::uint8_t> read_bytes(hid_t group, const std::string& name, const std::string& context) {
  h5::Handle ds = h5::open_dataset(group, name, context);
  h5::Handle type(h5::check(H5Dget_type(ds.get()), context), h5::Handle::Kind::datatype);
  if (!h5::is_integer_type(type.get()) || H5Tget_size(type.get()) != 1)
    throw InputError(context + ": expected uint8 bytes, found " + h5::describe_type(type.get()));
  const auto shape = h5::dataset_shape(ds.get());
  if (shape.size() != 1) throw InputError(context + ": expected rank 1, found rank " + std::to_string(shape.size()));
  std::vector<std::uint8_t> bytes(h5::check_stored_extent(ds.get(), context));
  h5::read_all(ds.get(), H5T_NATIVE_UINT8, bytes.data(), context);
  return bytes;
}
}  // namespace

bool is_compressed_file(const std::string& path) {
  h5::Handle file = h5::open_file_readonly(path);
  return h5::has_attribute(file.get(), "format") &&
         h5::read_string_attribute(file.get(), "format", path) == kCompressedFormat;
}

CompressedReader::CompressedReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->file = h5::open_file_readonly(path);
  const hid_t file = impl_->file.get();
  impl_->meta = layout::read_meta_attributes(file, path, kCompressedFormat);
  impl_->scheme = h5::read_string_attribute(file, compressed::kAttrScheme, path);
  try {
    (void)make_scheme(impl_->scheme);
  } catch (const Error& e) {
    throw InputError(path + ": attribute 'scheme': " + e.what());
  }
  impl_->meta.tokens = h5::read_int_attribute(file, compressed::kAttrTokens, path);
  if (impl_->meta.tokens < 0) throw InputError(path + ": attribute 'tokens' is negative");
  // The decompressed layer (kv heads x tokens x head_dim elements, up to 4 bytes each) must be
  // addressable; each unit's stored bytes bound it further in read_unit().
  h5::checked_mul(h5::checked_mul(h5::checked_mul(impl_->meta.tokens, impl_->meta.num_kv_heads, path,
                                                  "attribute 'tokens' x num_kv_heads"),
                                  impl_->meta.head_dim, path, "attribute 'tokens' x num_kv_heads x head_dim"),
                  4, path, "the decompressed layer size");
  try {
    impl_->meta.kv_dtype = parse_dtype(h5::read_string_attribute(file, compressed::kAttrKvDtype, path));
  } catch (const ParameterError& e) {
    throw InputError(path + ": attribute 'kv_dtype': " + e.what());
  }
  layout::read_aux_datasets(file, impl_->meta, path);
  const std::int64_t probes = static_cast<std::int64_t>(impl_->meta.q_pos.size());
  for (int layer = 0; layer < impl_->meta.num_layers; ++layer) {
    const std::string q = layout::layer_dataset(layer, "q");
    layout::check_tensor3(file, q, {impl_->meta.num_q_heads, probes, impl_->meta.head_dim}, path + ": " + q);
    for (TensorRole role : {TensorRole::key, TensorRole::value})
      for (int head = 0; head < impl_->meta.num_kv_heads; ++head) {
        const std::string unit = compressed::unit_group(layer, role, head);
        if (!h5::link_exists(file, unit)) throw InputError(path + ": " + unit + ": group is missing");
      }
  }
}

CompressedReader::~CompressedReader() = default;
CompressedReader::CompressedReader(CompressedReader&&) noexcept = default;
CompressedReader& CompressedReader::operator=(CompressedReader&&) noexcept = default;

const std::string& CompressedReader::path() const { return impl_->path; }
const TraceMeta& CompressedReader::meta() const { return impl_->meta; }
const std::string& CompressedReader::scheme() const { return impl_->scheme; }

Compressed CompressedReader::read_unit(int layer, TensorRole role, int head) const {
  const TraceMeta& meta = impl_->meta;
  const std::string unit = compressed::unit_group(layer, role, head);
  const std::string context = impl_->path + ": " + unit;
  if (layer < 0 || layer >= meta.num_layers || head < 0 || head >= meta.num_kv_heads)
    throw InputError(context + ": no such unit");
  h5::Handle group = h5::open_group(impl_->file.get(), unit, impl_->path);
  Compressed c;
  c.scheme = impl_->scheme;
  c.role = role;
  c.tokens = h5::read_int_attribute(group.get(), compressed::kAttrTokens, context);
  c.channels = h5::read_int_attribute(group.get(), compressed::kAttrChannels, context);
  if (c.tokens != meta.tokens || c.channels != meta.head_dim)
    throw InputError(context + ": shape [" + std::to_string(c.tokens) + ", " + std::to_string(c.channels) +
                     "] differs from the trace's [" + std::to_string(meta.tokens) + ", " +
                     std::to_string(meta.head_dim) + "]");
  try {
    c.dtype = parse_dtype(h5::read_string_attribute(group.get(), compressed::kAttrDtype, context));
  } catch (const ParameterError& e) {
    throw InputError(context + ": attribute 'dtype': " + e.what());
  }
  std::uint64_t stored = 0;
  for (const std::string& name : split_names(h5::read_string_attribute(group.get(), compressed::kAttrParts, context))) {
    c.parts.push_back({name, read_bytes(group.get(), name, context + "/" + name)});
    stored += c.parts.back().bytes.size();
  }
  // No scheme stores less than one bit per element: a unit claiming more elements than 8x
  // its stored bytes is corrupt, and is refused before anything is allocated for it.
  const std::int64_t elements = h5::checked_mul(c.tokens, c.channels, context, "tokens x channels");
  if (static_cast<std::uint64_t>(elements) > 8 * stored)
    throw InputError(context + ": " + std::to_string(c.tokens) + " tokens x " + std::to_string(c.channels) +
                     " channels but only " + std::to_string(stored) + " bytes stored (corrupt?)");
  if (h5::has_attribute(group.get(), compressed::kAttrSegmentEdges)) {
    SegmentDiagnostics segments;
    for (std::int64_t e : h5::read_int_array_attribute(group.get(), compressed::kAttrSegmentEdges, context))
      segments.edges.push_back(static_cast<std::uint32_t>(e));
    c.diagnostics.segments = std::move(segments);
  }
  return c;
}

Tensor3 CompressedReader::read_queries(int layer) const {
  const std::string q = layout::layer_dataset(layer, "q");
  Tensor3 t = layout::read_tensor3(impl_->file.get(), q, impl_->path + ": " + q);
  layout::check_finite(t, impl_->path + ": " + q);
  return t;
}

}  // namespace dgq::sim

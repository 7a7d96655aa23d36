#include "trace/trace_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/non_finite_name.hpp"

namespace dgq::sim::layout {

std::string layer_group(int layer) { return "/layers/" + std::to_string(layer); }
std::string layer_dataset(int layer, const std::string& name) { return layer_group(layer) + "/" + name; }

void write_meta_attributes(hid_t file, const TraceMeta& meta, const std::string& format) {
  h5::write_string_attribute(file, "format", format);
  h5::write_int_attribute(file, "version", kTraceVersion);
  h5::write_string_attribute(file, "model", meta.model);
  h5::write_int_attribute(file, "num_layers", meta.num_layers);
  h5::write_int_attribute(file, "num_q_heads", meta.num_q_heads);
  h5::write_int_attribute(file, "num_kv_heads", meta.num_kv_heads);
  h5::write_int_attribute(file, "head_dim", meta.head_dim);
  h5::write_int_attribute(file, "rope_applied", meta.rope_applied ? 1 : 0);
  h5::write_string_attribute(file, "source", meta.source);
  h5::write_string_attribute(file, "prompt_kind", meta.prompt_kind);
  if (meta.seed) h5::write_int_attribute(file, "seed", static_cast<std::int64_t>(*meta.seed));
  if (!meta.layer_ids.empty())
    h5::write_int_array_attribute(file, "layer_ids",
                                  std::vector<std::int64_t>(meta.layer_ids.begin(), meta.layer_ids.end()));
  if (meta.generator_version) h5::write_int_attribute(file, kAttrGeneratorVersion, *meta.generator_version);
  if (!meta.generator_options.empty()) h5::write_string_attribute(file, kAttrGeneratorOptions, meta.generator_options);
}

namespace {
int read_positive_int(hid_t file, const char* name, const std::string& path) {
  const std::int64_t v = h5::read_int_attribute(file, name, path);
  if (v <= 0 || v > (1 << 24))
    throw InputError(path + ": attribute '" + name + "' = " + std::to_string(v) + " is out of range [1, 16777216]");
  return static_cast<int>(v);
}

// The optional `layer_ids`: one non-negative model layer index per stored layer.
std::vector<int> read_layer_ids(hid_t file, int num_layers, const std::string& path) {
  const auto ids = h5::read_int_array_attribute(file, "layer_ids", path);
  if (static_cast<std::int64_t>(ids.size()) != num_layers)
    throw InputError(path + ": attribute 'layer_ids' has " + std::to_string(ids.size()) + " entries for " +
                     std::to_string(num_layers) + " layers (num_layers)");
  std::vector<int> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > (1 << 24))
      throw InputError(path + ": attribute 'layer_ids'[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                       " is out of range [0, 16777216]");
    out.push_back(static_cast<int>(ids[i]));
  }
  return out;
}
}  // namespace

TraceMeta read_meta_attributes(hid_t file, const std::string& path, const std::string& expected_format) {
  const std::string format = h5::read_string_attribute(file, "format", path);
  if (format != expected_format)
    throw InputError(path + ": attribute 'format' is '" + format + "', expected '" + expected_format + "'");
  const std::int64_t version = h5::read_int_attribute(file, "version", path);
  if (version != kTraceVersion)
    throw InputError(path + ": unsupported version " + std::to_string(version) + " (this dgq reads version 1)");
  TraceMeta meta;
  meta.model = h5::read_string_attribute(file, "model", path);
  meta.num_layers = read_positive_int(file, "num_layers", path);
  meta.num_q_heads = read_positive_int(file, "num_q_heads", path);
  meta.num_kv_heads = read_positive_int(file, "num_kv_heads", path);
  meta.head_dim = read_positive_int(file, "head_dim", path);
  if (meta.num_q_heads % meta.num_kv_heads != 0)
    throw InputError(path + ": num_q_heads (" + std::to_string(meta.num_q_heads) +
                     ") is not a multiple of num_kv_heads (" + std::to_string(meta.num_kv_heads) + ")");
  const std::int64_t rope = h5::read_int_attribute(file, "rope_applied", path);
  if (rope != 0 && rope != 1)
    throw InputError(path + ": attribute 'rope_applied' = " + std::to_string(rope) + ", expected 0 or 1");
  meta.rope_applied = rope == 1;
  meta.source = h5::read_string_attribute(file, "source", path);
  meta.prompt_kind = h5::read_string_attribute(file, "prompt_kind", path);
  if (h5::has_attribute(file, "seed")) {
    const std::int64_t seed = h5::read_int_attribute(file, "seed", path);
    meta.seed = static_cast<std::uint64_t>(seed);
  }
  if (h5::has_attribute(file, "layer_ids")) meta.layer_ids = read_layer_ids(file, meta.num_layers, path);
  if (h5::has_attribute(file, kAttrGeneratorVersion))
    meta.generator_version = h5::read_int_attribute(file, kAttrGeneratorVersion, path);
  if (h5::has_attribute(file, kAttrGeneratorOptions))
    meta.generator_options = h5::read_string_attribute(file, kAttrGeneratorOptions, path);
  return meta;
}

void validate_meta_for_writing(const TraceMeta& meta) {
  auto positive = [](int v, const char* name) {
    if (v <= 0) throw ParameterError(std::string("trace ") + name + " must be >= 1, got " + std::to_string(v));
  };
  positive(meta.num_layers, "num_layers");
  positive(meta.num_q_heads, "num_q_heads");
  positive(meta.num_kv_heads, "num_kv_heads");
  positive(meta.head_dim, "head_dim");
  if (meta.num_q_heads % meta.num_kv_heads != 0)
    throw ParameterError("trace num_q_heads must be a multiple of num_kv_heads");
  if (meta.tokens < 0) throw ParameterError("trace tokens must be >= 0");
  for (std::size_t i = 0; i < meta.q_pos.size(); ++i) {
    if (meta.q_pos[i] < 0 || meta.q_pos[i] >= meta.tokens)
      throw ParameterError("trace q_pos[" + std::to_string(i) + "] = " + std::to_string(meta.q_pos[i]) +
                           " is outside [0, " + std::to_string(meta.tokens) + ")");
    if (i > 0 && meta.q_pos[i] <= meta.q_pos[i - 1])
      throw ParameterError("trace q_pos must be increasing (index " + std::to_string(i) + ")");
  }
  const auto length = static_cast<std::size_t>(meta.tokens);
  if (!meta.token_ids.empty() && meta.token_ids.size() != length)
    throw ParameterError("trace tokens vector must have L entries");
  if (!meta.noise_mask.empty() && meta.noise_mask.size() != length)
    throw ParameterError("trace noise_mask must have L entries");
}

void write_aux_datasets(hid_t file, const TraceMeta& meta, const std::string& path) {
  h5::write_vector(file, "/q_pos", meta.q_pos, path + ": /q_pos");
  if (!meta.token_ids.empty()) h5::write_vector(file, "/tokens", meta.token_ids, path + ": /tokens");
  if (!meta.noise_mask.empty()) h5::write_vector(file, "/noise_mask", meta.noise_mask, path + ": /noise_mask");
  if (!meta.text.empty()) h5::write_string_dataset(file, "/text", meta.text, path + ": /text");
}

namespace {
void require_length(const std::vector<std::int64_t>& v, std::int64_t expected, const std::string& context) {
  if (static_cast<std::int64_t>(v.size()) != expected)
    throw InputError(context + ": expected shape [" + std::to_string(expected) + "], found [" +
                     std::to_string(v.size()) + "]");
}
}  // namespace

void read_aux_datasets(hid_t file, TraceMeta& meta, const std::string& path) {
  const std::string qctx = path + ": /q_pos";
  const auto q_pos = h5::read_int_vector(file, "/q_pos", qctx);
  meta.q_pos.clear();
  for (std::size_t i = 0; i < q_pos.size(); ++i) {
    if (q_pos[i] < 0 || q_pos[i] >= meta.tokens)
      throw InputError(qctx + ": value " + std::to_string(q_pos[i]) + " at index " + std::to_string(i) +
                       " is outside [0, " + std::to_string(meta.tokens) + ")");
    if (i > 0 && q_pos[i] <= q_pos[i - 1]) throw InputError(qctx + ": not increasing at index " + std::to_string(i));
    meta.q_pos.push_back(static_cast<std::int32_t>(q_pos[i]));
  }
  meta.token_ids.clear();
  if (h5::link_exists(file, "/tokens")) {
    const auto ids = h5::read_int_vector(file, "/tokens", path + ": /tokens");
    require_length(ids, meta.tokens, path + ": /tokens");
    meta.token_ids.assign(ids.begin(), ids.end());
  }
  meta.noise_mask.clear();
  if (h5::link_exists(file, "/noise_mask")) {
    const std::string nctx = path + ": /noise_mask";
    const auto mask = h5::read_int_vector(file, "/noise_mask", nctx);
    require_length(mask, meta.tokens, nctx);
    for (std::size_t i = 0; i < mask.size(); ++i) {
      if (mask[i] != 0 && mask[i] != 1)
        throw InputError(nctx + ": value " + std::to_string(mask[i]) + " at index " + std::to_string(i) +
                         " (expected 0 or 1)");
      meta.noise_mask.push_back(static_cast<std::uint8_t>(mask[i]));
    }
  }
  meta.text = h5::link_exists(file, "/text") ? h5::read_string_dataset(file, "/text", path + ": /text") : "";
}

void write_tensor3(hid_t loc, const std::string& name, const Tensor3& t, const std::string& context) {
  h5::Handle type = h5::float_file_type(t.dtype);
  const std::vector<hsize_t> shape = {static_cast<hsize_t>(t.heads), static_cast<hsize_t>(t.tokens),
                                      static_cast<hsize_t>(t.channels)};
  // Contiguous and unfiltered (no chunk list): inflating deflated K/V cost `dgq compress` 3.8x
  // its CPU time for 16 % of the bytes (docs/benchmarks.md), and a layer is read whole anyway.
  // Readers accept chunked and deflated K/V too (older files, h5py exports).
  h5::Handle ds = h5::create_dataset(loc, name, type.get(), shape, {}, context);
  if (t.dtype == DType::bf16) h5::write_string_attribute(ds.get(), kDtypeAttribute, "bf16");
  h5::write_all(ds.get(), type.get(), t.storage.data(), context);
}

std::optional<DType> tensor_dtype(hid_t dataset, hid_t type, const std::string& context) {
  if (const auto dtype = h5::float_dtype_of(type)) return dtype;
  // bf16: HDF5 has no such float, so it is stored as its bits, uint16, marked dtype = "bf16".
  if (H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 2 && H5Tget_sign(type) == H5T_SGN_NONE &&
      H5Tget_order(type) == H5T_ORDER_LE && h5::has_attribute(dataset, kDtypeAttribute) &&
      h5::read_string_attribute(dataset, kDtypeAttribute, context) == "bf16")
    return DType::bf16;
  return std::nullopt;
}

DType check_tensor3(hid_t loc, const std::string& name, const std::vector<std::int64_t>& expected,
                    const std::string& context) {
  h5::Handle ds = h5::open_dataset(loc, name, context);
  h5::Handle type(h5::check(H5Dget_type(ds.get()), context), h5::Handle::Kind::datatype);
  const auto dtype = tensor_dtype(ds.get(), type.get(), context);
  if (!dtype)
    throw InputError(context + ": unsupported dtype " + h5::describe_type(type.get()) +
                     " (expected f16, f32, or uint16 with attribute dtype = 'bf16')");
  const auto shape = h5::dataset_shape(ds.get());
  if (shape.size() != expected.size())
    throw InputError(context + ": expected rank " + std::to_string(expected.size()) + ", found rank " +
                     std::to_string(shape.size()) + " " + h5::shape_string(shape));
  bool same = true;
  for (std::size_t i = 0; i < shape.size(); ++i)
    same = same && (expected[i] < 0 || static_cast<std::int64_t>(shape[i]) == expected[i]);
  if (!same) {
    std::string want = "[";
    for (std::size_t i = 0; i < expected.size(); ++i)
      want += (i ? ", " : "") + (expected[i] < 0 ? std::string("*") : std::to_string(expected[i]));
    throw InputError(context + ": expected shape " + want + "], found " + h5::shape_string(shape));
  }
  h5::check_stored_extent(ds.get(), context);
  return *dtype;
}

Tensor3 read_tensor3(hid_t loc, const std::string& name, const std::string& context) {
  h5::Handle ds = h5::open_dataset(loc, name, context);
  h5::Handle type(h5::check(H5Dget_type(ds.get()), context), h5::Handle::Kind::datatype);
  const auto dtype = tensor_dtype(ds.get(), type.get(), context);
  const auto shape = h5::dataset_shape(ds.get());
  if (!dtype || shape.size() != 3) throw InputError(context + ": expected a rank-3 f16, f32 or bf16 dataset");
  h5::check_stored_extent(ds.get(), context);
  Tensor3 t(*dtype, static_cast<std::int64_t>(shape[0]), static_cast<std::int64_t>(shape[1]),
            static_cast<std::int64_t>(shape[2]));
  h5::Handle mem = h5::float_file_type(*dtype);  // little-endian host: file layout == memory layout
  h5::read_all(ds.get(), mem.get(), t.storage.data(), context);
  return t;
}

namespace {
bool element_finite(const std::byte* p, DType dtype, float* value) {
  if (dtype == DType::f32) {
    std::memcpy(value, p, 4);
    return std::isfinite(*value);
  }
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  *value = dtype == DType::f16 ? rules::half_to_float(bits) : rules::bf16_to_float(bits);
  return std::isfinite(*value);
}
}  // namespace

namespace {
// Index of the first non-finite element, or count. A branch-free scan of the exponent bits
// (all ones = Inf/NaN) per block, so that checking a layer costs about as much as reading it.
template <class Bits>
std::int64_t first_non_finite(const std::byte* data, std::int64_t count, Bits exponent_mask) {
  constexpr std::int64_t kBlock = 4096;
  for (std::int64_t start = 0; start < count; start += kBlock) {
    const std::int64_t end = std::min(count, start + kBlock);
    bool bad = false;
    for (std::int64_t i = start; i < end; ++i) {
      Bits bits;
      std::memcpy(&bits, data + static_cast<std::size_t>(i) * sizeof(Bits), sizeof(Bits));
      bad |= (bits & exponent_mask) == exponent_mask;
    }
    if (!bad) continue;
    for (std::int64_t i = start; i < end; ++i) {
      Bits bits;
      std::memcpy(&bits, data + static_cast<std::size_t>(i) * sizeof(Bits), sizeof(Bits));
      if ((bits & exponent_mask) == exponent_mask) return i;
    }
  }
  return count;
}
}  // namespace

void check_finite(const Tensor3& t, const std::string& context) {
  const std::size_t size = dtype_size(t.dtype);
  const std::int64_t count = t.heads * t.tokens * t.channels;
  const std::int64_t first =
      t.dtype == DType::f32
          ? first_non_finite<std::uint32_t>(t.storage.data(), count, 0x7f800000u)
          : first_non_finite<std::uint16_t>(t.storage.data(), count, t.dtype == DType::f16 ? 0x7c00 : 0x7f80);
  for (std::int64_t i = first; i < count; ++i) {
    float value;
    if (element_finite(t.storage.data() + static_cast<std::size_t>(i) * size, t.dtype, &value)) continue;
    const std::int64_t channel = i % t.channels;
    const std::int64_t token = (i / t.channels) % t.tokens;
    const std::int64_t head = i / (t.channels * t.tokens);
    throw InputError(context + ": non-finite value " + std::string(non_finite_name(value)) + " at head " +
                     std::to_string(head) + ", token " + std::to_string(token) + ", channel " +
                     std::to_string(channel) + " (index [" + std::to_string(head) + ", " + std::to_string(token) +
                     ", " + std::to_string(channel) + "])");
  }
}

}  // namespace dgq::sim::layout

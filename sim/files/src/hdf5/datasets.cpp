// Datasets: opening, shape checks before any allocation, creating (chunked, compressed, no
// timestamps), whole reads and writes (h5.hpp, "Datasets").
#include <algorithm>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "hdf5/h5_shared.hpp"

namespace dgq::sim::h5 {

Handle open_dataset(hid_t loc, const std::string& name, const std::string& context) {
  if (!link_exists(loc, name)) throw InputError(context + ": dataset is missing");
  H5O_info_t info;
  check_status(H5Oget_info_by_name(loc, name.c_str(), &info, H5P_DEFAULT), context);
  if (info.type != H5O_TYPE_DATASET) throw InputError(context + ": is not a dataset");
  return Handle(check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), context + ": cannot open dataset"),
                Handle::Kind::dataset);
}

std::vector<hsize_t> dataset_shape(hid_t dataset) {
  Handle space(check(H5Dget_space(dataset), "dataspace"), Handle::Kind::dataspace);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> shape(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr);
  return shape;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& context, const char* what) {
  std::int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out))
    throw InputError(context + ": " + what + " overflows (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return out;
}

namespace {
constexpr std::uint64_t kMaxDatasetBytes = std::uint64_t{1} << 40;  // no dgq file holds 1 TiB in one dataset
constexpr std::uint64_t kMaxFilterExpansion = 1100;                 // deflate's worst case is about 1032:1

std::uint64_t file_size_of(hid_t object) {
  Handle file(H5Iget_file_id(object), Handle::Kind::file);
  hsize_t size = 0;
  if (!file.valid() || H5Fget_filesize(file.get(), &size) < 0) {
    take_error_message();
    return 0;
  }
  return size;
}
}  // namespace

std::uint64_t check_stored_extent(hid_t dataset, const std::string& context) {
  const auto shape = dataset_shape(dataset);
  std::uint64_t points = 1;
  for (hsize_t d : shape)
    if (__builtin_mul_overflow(points, static_cast<std::uint64_t>(d), &points) || points > kMaxDatasetBytes)
      throw InputError(context + ": shape " + shape_string(shape) + " is too large");
  Handle type(check(H5Dget_type(dataset), context), Handle::Kind::datatype);
  const std::uint64_t element = H5Tget_size(type.get());
  std::uint64_t logical = 0;
  if (element == 0 || __builtin_mul_overflow(points, element, &logical) || logical > kMaxDatasetBytes)
    throw InputError(context + ": shape " + shape_string(shape) + " is too large");
  if (logical == 0) return points;
  const std::uint64_t stored = H5Dget_storage_size(dataset);
  const std::uint64_t file_bytes = file_size_of(dataset);
  const std::string claim =
      context + ": shape " + shape_string(shape) + " (" + std::to_string(logical) + " bytes) but ";
  if (stored == 0) throw InputError(claim + "no data is stored (file truncated or corrupt?)");
  if (file_bytes > 0 && stored > file_bytes)
    throw InputError(claim + std::to_string(stored) + " bytes stored in a file of " + std::to_string(file_bytes) +
                     " bytes (corrupt?)");
  Handle dcpl(check(H5Dget_create_plist(dataset), context), Handle::Kind::plist);
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  const int filters = layout == H5D_CHUNKED ? H5Pget_nfilters(dcpl.get()) : 0;
  const bool ok = filters > 0 ? logical / kMaxFilterExpansion <= stored : stored >= logical;
  if (!ok)
    throw InputError(claim + "only " + std::to_string(stored) + " bytes are stored (file truncated or corrupt?)");
  return points;
}

std::string shape_string(const std::vector<hsize_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Handle create_dataset(hid_t loc, const std::string& name, hid_t file_type, const std::vector<hsize_t>& shape,
                      const std::vector<hsize_t>& chunk, const std::string& context) {
  Handle space(check(shape.empty() ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                     context),
               Handle::Kind::dataspace);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), context), Handle::Kind::plist);
  check_status(H5Pset_obj_track_times(dcpl.get(), false), context);  // same content, same bytes
  bool chunkable = !shape.empty() && chunk.size() == shape.size();
  for (hsize_t d : shape) chunkable = chunkable && d > 0;
  if (chunkable) {
    std::vector<hsize_t> clipped(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i) clipped[i] = std::max<hsize_t>(1, std::min(chunk[i], shape[i]));
    check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(clipped.size()), clipped.data()), context);
    check_status(H5Pset_shuffle(dcpl.get()), context);
    check_status(H5Pset_deflate(dcpl.get(), 4), context);
  }
  return Handle(check(H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                      context + ": cannot create dataset"),
                Handle::Kind::dataset);
}

hssize_t element_count(hid_t dataset) {
  Handle space(check(H5Dget_space(dataset), "dataspace"), Handle::Kind::dataspace);
  return H5Sget_simple_extent_npoints(space.get());
}

void write_all(hid_t dataset, hid_t mem_type, const void* data, const std::string& context) {
  if (element_count(dataset) == 0) return;
  check_status(H5Dwrite(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), context + ": write failed");
}

void read_all(hid_t dataset, hid_t mem_type, void* data, const std::string& context) {
  if (element_count(dataset) == 0) return;
  check_status(H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
               context + ": read failed (file truncated or corrupt?)");
}

void write_vector(hid_t loc, const std::string& name, const std::vector<std::int32_t>& v, const std::string& context) {
  Handle ds = create_dataset(loc, name, H5T_STD_I32LE, {v.size()}, {65536}, context);
  write_all(ds.get(), H5T_NATIVE_INT32, v.data(), context);
}

void write_vector(hid_t loc, const std::string& name, const std::vector<std::uint8_t>& v, const std::string& context) {
  Handle ds = create_dataset(loc, name, H5T_STD_U8LE, {v.size()}, {65536}, context);
  write_all(ds.get(), H5T_NATIVE_UINT8, v.data(), context);
}

std::vector<std::int64_t> read_int_vector(hid_t loc, const std::string& name, const std::string& context) {
  Handle ds = open_dataset(loc, name, context);
  Handle type(check(H5Dget_type(ds.get()), context), Handle::Kind::datatype);
  if (!is_integer_type(type.get()))
    throw InputError(context + ": expected an integer dtype, found " + describe_type(type.get()));
  const auto shape = dataset_shape(ds.get());
  if (shape.size() != 1) throw InputError(context + ": expected rank 1, found rank " + std::to_string(shape.size()));
  std::vector<std::int64_t> out(check_stored_extent(ds.get(), context));
  read_all(ds.get(), H5T_NATIVE_INT64, out.data(), context);
  return out;
}

}  // namespace dgq::sim::h5

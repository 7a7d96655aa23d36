#include "hdf5/h5.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "dgq/errors.hpp"
#include "hdf5/isolated_metadata_check.hpp"

namespace dgq::sim::h5 {

namespace {
// libhdf5 1.10.8's exit handler closes files still open and crashes in H5F__close_cb on a file
// whose flush failed (disk full). dgq closes every file it writes itself (close_file(), the
// Handle destructors), so the handler is switched off before the library starts.
[[maybe_unused]] const bool no_hdf5_exit_handler = [] {
  H5dont_atexit();
  return true;
}();
}  // namespace

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {
// H5E_WALK_UPWARD visits the innermost (most specific) error first.
herr_t keep_innermost(unsigned n, const H5E_error2_t* err, void* client) {
  auto* message = static_cast<std::string*>(client);
  if (n == 0 && err->desc) *message = err->desc;
  return 0;
}
}  // namespace

std::string take_error_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

void fail(const std::string& context) {
  std::string detail = take_error_message();
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  throw InputError(detail.empty() ? context : context + " (HDF5: " + detail + ")");
}

hid_t check(hid_t id, const std::string& context) {
  if (id < 0) fail(context);
  return id;
}

void check_status(herr_t status, const std::string& context) {
  if (status < 0) fail(context);
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    kind_ = o.kind_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

bool Handle::close() {
  if (id_ < 0) return true;
  herr_t status = 0;
  switch (kind_) {
    case Kind::file: status = H5Fclose(id_); break;
    case Kind::group: status = H5Gclose(id_); break;
    case Kind::dataset: status = H5Dclose(id_); break;
    case Kind::dataspace: status = H5Sclose(id_); break;
    case Kind::datatype: status = H5Tclose(id_); break;
    case Kind::attribute: status = H5Aclose(id_); break;
    case Kind::plist: status = H5Pclose(id_); break;
    case Kind::object: status = H5Oclose(id_); break;
  }
  id_ = H5I_INVALID_HID;
  return status >= 0;
}

// ---- Files ------------------------------------------------------------------------------

namespace {
// A strong close degree makes H5Fclose close every object still open in the file, so the
// bytes are on disk when the writer renames X.partial to X.
Handle strong_close_fapl() {
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "file access properties"), Handle::Kind::plist);
  check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
  return fapl;
}
}  // namespace

namespace {
struct FileImage {
  std::string name;
  const void* data = nullptr;
  std::size_t size = 0;
};
thread_local FileImage* current_image = nullptr;

// Opens the registered in-memory image through the core driver (no backing store); < 0 on failure.
hid_t open_image_id(const FileImage& image) {
  Handle fapl = strong_close_fapl();
  check_status(H5Pset_fapl_core(fapl.get(), 1 << 16, false), "file access properties");
  check_status(H5Pset_file_image(fapl.get(), const_cast<void*>(image.data), image.size), "file image");
  return H5Fopen(image.name.c_str(), H5F_ACC_RDONLY, fapl.get());
}

Handle open_image_readonly(const FileImage& image) {
  const std::string not_hdf5 = image.name + ": not an HDF5 file or truncated";
  if (image.size == 0) throw InputError(not_hdf5);
  check_metadata_isolated(image.name, [&image] { return open_image_id(image); }, false);
  const hid_t id = open_image_id(image);
  if (id < 0) {
    const std::string detail = take_error_message();
    throw InputError(detail.empty() ? not_hdf5 : not_hdf5 + " (HDF5: " + detail + ")");
  }
  return Handle(id, Handle::Kind::file);
}
}  // namespace

ScopedFileImage::ScopedFileImage(std::string name, const void* data, std::size_t size) {
  current_image = new FileImage{std::move(name), data, size};
}
ScopedFileImage::~ScopedFileImage() {
  delete current_image;
  current_image = nullptr;
}

Handle open_file_readonly(const std::string& path) {
  silence_hdf5_errors();
  if (current_image && current_image->name == path) return open_image_readonly(*current_image);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a file");
  const std::string not_hdf5 = path + ": not an HDF5 file or truncated";
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    take_error_message();
    throw InputError(not_hdf5);
  }
  const auto open_id = [&path] { return H5Fopen(path.c_str(), H5F_ACC_RDONLY, strong_close_fapl().get()); };
  check_metadata_isolated(path, open_id, true);
  const hid_t id = open_id();
  if (id < 0) {
    const std::string detail = take_error_message();
    throw InputError(detail.empty() ? not_hdf5 : not_hdf5 + " (HDF5: " + detail + ")");
  }
  return Handle(id, Handle::Kind::file);
}

Handle create_file(const std::string& path) {
  silence_hdf5_errors();
  Handle fapl = strong_close_fapl();
  return Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                      path + ": cannot create file"),
                Handle::Kind::file);
}

Handle open_own_copy_readwrite(const std::string& copy, const std::string& original) {
  silence_hdf5_errors();
  if (!is_written_here(original))
    throw Error(original + ": not a file this process wrote; it cannot be appended to unchecked");
  Handle fapl = strong_close_fapl();
  return Handle(check(H5Fopen(copy.c_str(), H5F_ACC_RDWR, fapl.get()), copy + ": cannot open for writing"),
                Handle::Kind::file);
}

void close_file(Handle& file, const std::string& context) {
  if (!file.valid()) return;
  const hid_t id = file.get();
  if (H5Fflush(id, H5F_SCOPE_LOCAL) < 0 || !file.close()) {
    const std::string detail = one_line(take_error_message());
    // Keep a failed file open: closing it again (at exit) crashes libhdf5 1.10.8.
    file.release();
    throw InputError(context + ": closing the file failed" + (detail.empty() ? "" : " (HDF5: " + detail + ")") +
                     " (disk full?)");
  }
}

bool link_exists(hid_t loc, const std::string& path) {
  silence_hdf5_errors();
  if (path.empty()) return false;
  // H5Lexists needs every intermediate component to exist, so walk them one by one.
  std::string prefix;
  std::size_t start = path.front() == '/' ? 1 : 0;
  prefix = path.front() == '/' ? "/" : "";
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      prefix += part;
      if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
        take_error_message();
        return false;
      }
      prefix += "/";
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

Handle open_group(hid_t loc, const std::string& name, const std::string& context) {
  if (!link_exists(loc, name)) throw InputError(context + ": group " + name + " is missing");
  return Handle(check(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), context + ": cannot open group " + name),
                Handle::Kind::group);
}

Handle create_group(hid_t loc, const std::string& name, const std::string& context) {
  Handle gcpl(check(H5Pcreate(H5P_GROUP_CREATE), context), Handle::Kind::plist);
  check_status(H5Pset_obj_track_times(gcpl.get(), false), context);  // no timestamps: reproducible bytes
  return Handle(check(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                      context + ": cannot create group " + name),
                Handle::Kind::group);
}

Handle open_dataset(hid_t loc, const std::string& name, const std::string& context) {
  if (!link_exists(loc, name)) throw InputError(context + ": dataset is missing");
  H5O_info_t info;
  check_status(H5Oget_info_by_name(loc, name.c_str(), &info, H5P_DEFAULT), context);
  if (info.type != H5O_TYPE_DATASET) throw InputError(context + ": is not a dataset");
  return Handle(check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), context + ": cannot open dataset"),
                Handle::Kind::dataset);
}

// ---- Attributes ----------------------------------------------------------------------------

bool has_attribute(hid_t obj, const std::string& name) {
  silence_hdf5_errors();
  const htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) take_error_message();
  return exists > 0;
}

namespace {
Handle open_single_attribute(hid_t obj, const std::string& name, const std::string& where) {
  if (!has_attribute(obj, name)) throw InputError(where + ": attribute '" + name + "' is missing");
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), where + ": cannot open attribute '" + name + "'"),
              Handle::Kind::attribute);
  Handle space(check(H5Aget_space(attr.get()), where), Handle::Kind::dataspace);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw InputError(where + ": attribute '" + name + "' must hold a single value");
  return attr;
}

// A variable-length string lives in the file's global heap; libhdf5 1.10.8 can loop forever
// in H5HG__protect on a corrupt one (tests/fixtures/libhdf5, docs/robustness.md). dgq cannot
// interrupt libhdf5 and continue, so a read that does not finish within DGQ_HDF5_READ_TIMEOUT
// seconds (default 60; 0 = no limit, which the fuzz targets use) ends the process with one
// error line and exit code 2, naming the file and attribute. Reads happen on one thread.
char deadline_message[1024];
std::size_t deadline_length = 0;

void on_deadline(int) {
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, deadline_message, deadline_length);
  ::_exit(2);
}

unsigned read_timeout_seconds() {
  static const unsigned seconds = [] {
    const char* text = std::getenv("DGQ_HDF5_READ_TIMEOUT");
    return text ? static_cast<unsigned>(std::strtoul(text, nullptr, 10)) : 60u;
  }();
  return seconds;
}

class ReadDeadline {
 public:
  explicit ReadDeadline(const std::string& where) : seconds_(read_timeout_seconds()) {
    if (seconds_ == 0) return;
    const std::string text = "dgq: error: " + where + ": libhdf5 did not finish reading a variable-length string in " +
                             std::to_string(seconds_) +
                             " s (corrupt global heap: libhdf5 1.10.8 loops in H5HG__protect; docs/robustness.md)\n";
    deadline_length = std::min(text.size(), sizeof deadline_message - 1);
    std::memcpy(deadline_message, text.data(), deadline_length);
    if (deadline_length == sizeof deadline_message - 1) deadline_message[deadline_length - 1] = '\n';
    struct sigaction action {};
    action.sa_handler = on_deadline;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, nullptr);
    alarm(seconds_);
  }
  ~ReadDeadline() {
    if (seconds_ != 0) alarm(0);
  }
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

 private:
  unsigned seconds_;
};

// Reads one string from an attribute (is_attribute) or a scalar dataset.
std::string read_string_object(hid_t obj, bool is_attribute, const std::string& where) {
  Handle type(check(is_attribute ? H5Aget_type(obj) : H5Dget_type(obj), where), Handle::Kind::datatype);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw InputError(where + ": expected a string, found " + describe_type(type.get()));
  Handle mem(check(H5Tcopy(H5T_C_S1), where), Handle::Kind::datatype);
  H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
  auto read = [&](void* buffer) {
    const herr_t status = is_attribute ? H5Aread(obj, mem.get(), buffer)
                                       : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
    check_status(status, where + ": cannot read string");
  };
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Tset_size(mem.get(), H5T_VARIABLE);
    char* value = nullptr;
    {
      const ReadDeadline deadline(where);
      read(&value);
    }
    std::string out = value ? value : "";
    H5free_memory(value);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  const std::uint64_t stored = is_attribute ? H5Aget_storage_size(obj) : H5Dget_storage_size(obj);
  if (size == 0 || size > (std::size_t{1} << 26) || size > stored)
    throw InputError(where + ": fixed-length string of " + std::to_string(size) + " bytes with " +
                     std::to_string(stored) + " bytes stored (corrupt?)");
  H5Tset_size(mem.get(), size);
  H5Tset_strpad(mem.get(), H5T_STR_NULLPAD);
  std::vector<char> buffer(size + 1, '\0');
  read(buffer.data());
  std::string out(buffer.data(), size);
  while (!out.empty() && (out.back() == '\0' || out.back() == ' ')) out.pop_back();
  return out.substr(0, std::strlen(out.c_str()));
}

std::int64_t read_enum_value(hid_t attr, hid_t type, const std::string& where) {
  Handle native(check(H5Tget_native_type(type, H5T_DIR_ASCEND), where), Handle::Kind::datatype);
  Handle base(check(H5Tget_super(type), where), Handle::Kind::datatype);
  const std::size_t size = H5Tget_size(native.get());
  if (size > 8) throw InputError(where + ": enum wider than 8 bytes");
  unsigned char bytes[8] = {};
  check_status(H5Aread(attr, native.get(), bytes), where + ": cannot read");
  std::uint64_t raw = 0;
  std::memcpy(&raw, bytes, size);  // little-endian host
  if (H5Tget_sign(base.get()) == H5T_SGN_2 && size < 8 && (raw >> (8 * size - 1)) & 1u)
    raw |= ~std::uint64_t{0} << (8 * size);
  return static_cast<std::int64_t>(raw);
}
}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& context) {
  Handle attr = open_single_attribute(obj, name, context);
  return read_string_object(attr.get(), true, context + ": attribute '" + name + "'");
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& context) {
  Handle attr = open_single_attribute(obj, name, context);
  const std::string where = context + ": attribute '" + name + "'";
  Handle type(check(H5Aget_type(attr.get()), where), Handle::Kind::datatype);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls == H5T_ENUM) return read_enum_value(attr.get(), type.get(), where);
  if (cls != H5T_INTEGER) throw InputError(where + ": expected an integer, found " + describe_type(type.get()));
  std::int64_t value = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), where + ": cannot read");
  return value;
}

namespace {
Handle utf8_string_type() {
  Handle type(check(H5Tcopy(H5T_C_S1), "string type"), Handle::Kind::datatype);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}
}  // namespace

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  const std::string where = "attribute '" + name + "'";
  Handle type = utf8_string_type();
  Handle space(check(H5Screate(H5S_SCALAR), where), Handle::Kind::dataspace);
  Handle attr(check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create " + where),
              Handle::Kind::attribute);
  const char* text = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &text), "cannot write " + where);
}

void write_int_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  const std::string where = "attribute '" + name + "'";
  Handle space(check(H5Screate(H5S_SCALAR), where), Handle::Kind::dataspace);
  Handle attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create " + where),
              Handle::Kind::attribute);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), "cannot write " + where);
}

void write_int_array_attribute(hid_t obj, const std::string& name, const std::vector<std::int64_t>& values) {
  const std::string where = "attribute '" + name + "'";
  const hsize_t n = values.size();
  Handle space(check(H5Screate_simple(1, &n, nullptr), where), Handle::Kind::dataspace);
  Handle attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create " + where),
              Handle::Kind::attribute);
  if (n > 0) check_status(H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()), "cannot write " + where);
}

std::vector<std::int64_t> read_int_array_attribute(hid_t obj, const std::string& name, const std::string& context) {
  if (!has_attribute(obj, name)) throw InputError(context + ": attribute '" + name + "' is missing");
  const std::string where = context + ": attribute '" + name + "'";
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), where), Handle::Kind::attribute);
  Handle type(check(H5Aget_type(attr.get()), where), Handle::Kind::datatype);
  if (!is_integer_type(type.get())) throw InputError(where + ": expected integers, found " + describe_type(type.get()));
  Handle space(check(H5Aget_space(attr.get()), where), Handle::Kind::dataspace);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  // The values live in the object header: a count beyond what is stored is corruption.
  const std::uint64_t stored = H5Aget_storage_size(attr.get());
  if (n < 0 || n > (1 << 24) || static_cast<std::uint64_t>(n) * H5Tget_size(type.get()) > stored)
    throw InputError(where + ": " + std::to_string(n) + " values claimed but " + std::to_string(stored) +
                     " bytes stored (corrupt?)");
  std::vector<std::int64_t> values(static_cast<std::size_t>(n > 0 ? n : 0));
  if (!values.empty()) check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()), where + ": cannot read");
  return values;
}

// ---- Datatypes -----------------------------------------------------------------------------

Handle half_type() {
  // The same construction as h5py's float16 type.
  Handle type(check(H5Tcopy(H5T_IEEE_F32LE), "half type"), Handle::Kind::datatype);
  check_status(H5Tset_fields(type.get(), 15, 10, 5, 0, 10), "half type");
  check_status(H5Tset_size(type.get(), 2), "half type");
  check_status(H5Tset_ebias(type.get(), 15), "half type");
  return type;
}

Handle float_file_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return half_type();
    case DType::f32: return Handle(check(H5Tcopy(H5T_IEEE_F32LE), "float type"), Handle::Kind::datatype);
    case DType::bf16:  // its bits; the reader knows it by the dataset's dtype attribute
      return Handle(check(H5Tcopy(H5T_STD_U16LE), "bf16 type"), Handle::Kind::datatype);
  }
  throw InputError("unknown dtype");
}

std::optional<DType> float_dtype_of(hid_t type) {
  if (H5Tget_class(type) != H5T_FLOAT) return std::nullopt;
  std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0) {
    take_error_message();
    return std::nullopt;
  }
  const std::size_t size = H5Tget_size(type);
  const std::size_t bias = H5Tget_ebias(type);
  if (size == 2 && spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 && bias == 15)
    return DType::f16;
  if (size == 4 && spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23 && bias == 127)
    return DType::f32;
  return std::nullopt;
}

bool is_integer_type(hid_t type) { return H5Tget_class(type) == H5T_INTEGER; }

std::string describe_type(hid_t type) {
  const std::string bytes = " (" + std::to_string(H5Tget_size(type)) + " bytes)";
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "unsigned integer" : "integer") + bytes;
    case H5T_FLOAT: {
      const auto dtype = float_dtype_of(type);
      return dtype ? std::string(dtype_name(*dtype)) : "non-IEEE or unsupported float" + bytes;
    }
    case H5T_STRING: return "string";
    case H5T_ENUM: return "enum" + bytes;
    case H5T_COMPOUND: return "compound" + bytes;
    default: return "unsupported type" + bytes;
  }
}

// ---- Datasets ------------------------------------------------------------------------------

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
  const std::string claim = context + ": shape " + shape_string(shape) + " (" + std::to_string(logical) +
                            " bytes) but ";
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

namespace {
hssize_t element_count(hid_t dataset) {
  Handle space(check(H5Dget_space(dataset), "dataspace"), Handle::Kind::dataspace);
  return H5Sget_simple_extent_npoints(space.get());
}
}  // namespace

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

void write_string_dataset(hid_t loc, const std::string& name, const std::string& value, const std::string& context) {
  Handle type = utf8_string_type();
  Handle ds = create_dataset(loc, name, type.get(), {}, {}, context);
  const char* text = value.c_str();
  write_all(ds.get(), type.get(), &text, context);
}

std::string read_string_dataset(hid_t loc, const std::string& name, const std::string& context) {
  Handle ds = open_dataset(loc, name, context);
  if (element_count(ds.get()) != 1) throw InputError(context + ": expected a scalar string");
  return read_string_object(ds.get(), false, context);
}

}  // namespace dgq::sim::h5

// Integer attributes, and what every attribute read checks first (h5.hpp, "Attributes").
#include <cstring>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "hdf5/h5_shared.hpp"

namespace dgq::sim::h5 {

bool has_attribute(hid_t obj, const std::string& name) {
  silence_hdf5_errors();
  const htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) take_error_message();
  return exists > 0;
}

Handle open_single_attribute(hid_t obj, const std::string& name, const std::string& where) {
  if (!has_attribute(obj, name)) throw InputError(where + ": attribute '" + name + "' is missing");
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), where + ": cannot open attribute '" + name + "'"),
              Handle::Kind::attribute);
  Handle space(check(H5Aget_space(attr.get()), where), Handle::Kind::dataspace);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw InputError(where + ": attribute '" + name + "' must hold a single value");
  return attr;
}

namespace {
// h5py writes bools as an enum over int8; dgq reads them as integers.
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

}  // namespace dgq::sim::h5

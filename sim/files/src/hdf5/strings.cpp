// Strings in attributes and scalar datasets: written as variable-length UTF-8, read in either
// form (h5.hpp); variable-length ones without libhdf5's global-heap code
// (variable_length_strings.cpp).
#include <cstring>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "hdf5/h5_shared.hpp"

namespace dgq::sim::h5 {

// Reads one string from an attribute (is_attribute) or a scalar dataset.
std::string read_string_object(hid_t obj, bool is_attribute, const std::string& where) {
  Handle type(check(is_attribute ? H5Aget_type(obj) : H5Dget_type(obj), where), Handle::Kind::datatype);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw InputError(where + ": expected a string, found " + describe_type(type.get()));
  if (H5Tis_variable_str(type.get()) > 0) return read_variable_length_string(obj, is_attribute, where);
  // Fixed length: the bytes are in the object header or the dataset's storage, no global heap.
  const std::size_t size = H5Tget_size(type.get());
  const std::uint64_t stored = is_attribute ? H5Aget_storage_size(obj) : H5Dget_storage_size(obj);
  if (size == 0 || size > (std::size_t{1} << 26) || size > stored)
    throw InputError(where + ": fixed-length string of " + std::to_string(size) + " bytes with " +
                     std::to_string(stored) + " bytes stored (corrupt?)");
  Handle mem(check(H5Tcopy(H5T_C_S1), where), Handle::Kind::datatype);
  H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
  H5Tset_size(mem.get(), size);
  H5Tset_strpad(mem.get(), H5T_STR_NULLPAD);
  std::vector<char> buffer(size + 1, '\0');
  const herr_t status = is_attribute ? H5Aread(obj, mem.get(), buffer.data())
                                     : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
  check_status(status, where + ": cannot read string");
  std::string out(buffer.data(), size);
  while (!out.empty() && (out.back() == '\0' || out.back() == ' ')) out.pop_back();
  return out.substr(0, std::strlen(out.c_str()));
}

Handle utf8_string_type() {
  Handle type(check(H5Tcopy(H5T_C_S1), "string type"), Handle::Kind::datatype);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& context) {
  Handle attr = open_single_attribute(obj, name, context);
  return read_string_object(attr.get(), true, context + ": attribute '" + name + "'");
}

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  const std::string where = "attribute '" + name + "'";
  Handle type = utf8_string_type();
  Handle space(check(H5Screate(H5S_SCALAR), where), Handle::Kind::dataspace);
  Handle attr(
      check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), "cannot create " + where),
      Handle::Kind::attribute);
  const char* text = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &text), "cannot write " + where);
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

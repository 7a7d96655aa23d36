// Every scalar attribute of a group, typed, for the export's attribute columns.
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "export_rows.hpp"

namespace dgq::sim::exporting {

namespace {

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

// NaN and inf are kept (bits_k of old eval chunks is NaN, the SNR of a lossless scheme inf):
// read_double_attribute refuses them, as a setting must be finite.
double read_any_double(hid_t attr, const std::string& where) {
  double value = 0;
  h5::check_status(H5Aread(attr, H5T_NATIVE_DOUBLE, &value), where + ": cannot read");
  return value;
}

}  // namespace

std::vector<std::pair<std::string, ExportValue>> scalar_attributes(hid_t object, const std::string& context) {
  std::vector<std::string> names;
  hsize_t index = 0;
  h5::check_status(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, collect_attribute_name, &names),
                   context + ": cannot list attributes");
  std::vector<std::pair<std::string, ExportValue>> out;
  for (const std::string& name : names) {
    const std::string where = context + ": attribute '" + name + "'";
    h5::Handle attr(h5::check(H5Aopen(object, name.c_str(), H5P_DEFAULT), where), h5::Handle::Kind::attribute);
    h5::Handle space(h5::check(H5Aget_space(attr.get()), where), h5::Handle::Kind::dataspace);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) continue;  // arrays are not cells
    h5::Handle type(h5::check(H5Aget_type(attr.get()), where), h5::Handle::Kind::datatype);
    switch (H5Tget_class(type.get())) {
      case H5T_STRING: out.emplace_back(name, h5::read_string_attribute(object, name, context)); break;
      case H5T_INTEGER:
      case H5T_ENUM: out.emplace_back(name, h5::read_int_attribute(object, name, context)); break;
      case H5T_FLOAT: out.emplace_back(name, read_any_double(attr.get(), where)); break;
      default: break;  // compound, opaque, references: nothing a table cell can hold
    }
  }
  return out;
}

}  // namespace dgq::sim::exporting

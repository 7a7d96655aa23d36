#include "dgq/sim/files/hdf5/numbers.hpp"

#include <cmath>

#include "dgq/errors.hpp"

namespace dgq::sim::h5 {

double read_double_attribute(hid_t obj, const std::string& name, const std::string& context) {
  if (!has_attribute(obj, name)) throw InputError(context + ": attribute '" + name + "' is missing");
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), context + ": attribute " + name), Handle::Kind::attribute);
  // One value is read into one double: an array attribute would overflow it (found by
  // tools/mutation-campaign.py: embedding_scale = 1000 numbers smashed the stack).
  Handle space(check(H5Aget_space(attr.get()), context + ": attribute " + name), Handle::Kind::dataspace);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw InputError(context + ": attribute '" + name + "' must hold a single value");
  Handle type(check(H5Aget_type(attr.get()), context), Handle::Kind::datatype);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw InputError(context + ": attribute '" + name + "' is not a number (" + describe_type(type.get()) + ")");
  double value = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), context + ": attribute " + name);
  if (!std::isfinite(value)) throw InputError(context + ": attribute '" + name + "' is not finite");
  return value;
}

void write_double_attribute(hid_t obj, const std::string& name, double value) {
  Handle space(check(H5Screate(H5S_SCALAR), name), Handle::Kind::dataspace);
  Handle attr(
      check(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), "attribute " + name),
      Handle::Kind::attribute);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), "attribute " + name);
}

void write_doubles(hid_t loc, const std::string& name, const std::vector<double>& values, const std::string& context) {
  Handle ds = create_dataset(loc, name, H5T_IEEE_F64LE, {values.size()}, {65536}, context);
  write_all(ds.get(), H5T_NATIVE_DOUBLE, values.data(), context);
}

std::vector<double> read_doubles(hid_t loc, const std::string& name, std::size_t expected, const std::string& context) {
  Handle ds = open_dataset(loc, name, context);
  const auto shape = dataset_shape(ds.get());
  if (shape != std::vector<hsize_t>{expected})
    throw InputError(context + ": shape " + shape_string(shape) + ", expected [" + std::to_string(expected) + "]");
  std::vector<double> out(expected);
  read_all(ds.get(), H5T_NATIVE_DOUBLE, out.data(), context);
  return out;
}

void write_floats(hid_t loc, const std::string& name, const std::vector<float>& values, hsize_t rows, hsize_t cols,
                  const std::string& context) {
  Handle ds = create_dataset(loc, name, H5T_IEEE_F32LE, {rows, cols}, {1, cols}, context);
  write_all(ds.get(), H5T_NATIVE_FLOAT, values.data(), context);
}

std::vector<float> read_float_rows(hid_t loc, const std::string& name, hsize_t first_row, hsize_t rows, hsize_t cols,
                                   const std::string& context) {
  Handle ds = open_dataset(loc, name, context);
  const auto shape = dataset_shape(ds.get());
  if (shape.size() != 2 || shape[1] != cols || shape[0] < first_row + rows)
    throw InputError(context + ": shape " + shape_string(shape) + ", need rows " + std::to_string(first_row) + ".." +
                     std::to_string(first_row + rows - 1) + " of width " + std::to_string(cols));
  std::vector<float> out(rows * cols);
  Handle file_space(check(H5Dget_space(ds.get()), context), Handle::Kind::dataspace);
  const hsize_t start[2] = {first_row, 0}, count[2] = {rows, cols};
  check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), context);
  Handle mem_space(check(H5Screate_simple(2, count, nullptr), context), Handle::Kind::dataspace);
  check_status(H5Dread(ds.get(), H5T_NATIVE_FLOAT, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()),
               context + ": read failed (file truncated or corrupt?)");
  return out;
}

}  // namespace dgq::sim::h5

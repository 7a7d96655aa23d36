#pragma once
// Floating-point attributes and datasets (model, token, eval and results files); h5.hpp has
// strings and integers, typed_arrays.hpp whole typed tables.
#include <string>
#include <vector>

#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim::h5 {

double read_double_attribute(hid_t obj, const std::string& name, const std::string& context);
void write_double_attribute(hid_t obj, const std::string& name, double value);
void write_doubles(hid_t loc, const std::string& name, const std::vector<double>& values, const std::string& context);
std::vector<double> read_doubles(hid_t loc, const std::string& name, std::size_t expected, const std::string& context);
// Row-major fp32 matrix [rows][cols].
void write_floats(hid_t loc, const std::string& name, const std::vector<float>& values, hsize_t rows, hsize_t cols,
                  const std::string& context);
std::vector<float> read_float_rows(hid_t loc, const std::string& name, hsize_t first_row, hsize_t rows, hsize_t cols,
                                   const std::string& context);

}  // namespace dgq::sim::h5

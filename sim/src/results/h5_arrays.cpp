#include "results/h5_arrays.hpp"

namespace dgq::sim::results_h5 {

void write_double_attribute(hid_t obj, const std::string& name, double value) {
  const std::string context = "attribute " + name;
  h5::Handle space(h5::check(H5Screate(H5S_SCALAR), context), h5::Handle::Kind::dataspace);
  h5::Handle attr(h5::check(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                            context),
                  h5::Handle::Kind::attribute);
  h5::check_status(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), context);
}

}  // namespace dgq::sim::results_h5

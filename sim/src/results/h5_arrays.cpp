#include "results/h5_arrays.hpp"

#include "dgq/errors.hpp"

namespace dgq::sim::results_h5 {

void write_double_attribute(hid_t obj, const std::string& name, double value) {
  const std::string context = "attribute " + name;
  h5::Handle space(h5::check(H5Screate(H5S_SCALAR), context), h5::Handle::Kind::dataspace);
  h5::Handle attr(h5::check(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                            context),
                  h5::Handle::Kind::attribute);
  h5::check_status(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), context);
}

h5::Handle open_file_readwrite(const std::string& path) {
  h5::silence_hdf5_errors();
  h5::Handle fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), path), h5::Handle::Kind::plist);
  // Strong close: closing the file closes every object in it, so nothing is left unflushed.
  h5::check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), path);
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    h5::take_error_message();
    throw InputError(path + ": not an HDF5 file or truncated");
  }
  return h5::Handle(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), path + ": cannot open for writing"),
                    h5::Handle::Kind::file);
}

}  // namespace dgq::sim::results_h5

// Handle: one HDF5 identifier, closed with the close function of its kind.
#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim::h5 {

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

}  // namespace dgq::sim::h5

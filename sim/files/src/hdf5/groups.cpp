// Links and groups: whether a path exists, opening and creating groups.
#include "dgq/sim/files/hdf5/h5.hpp"

#include "dgq/errors.hpp"

namespace dgq::sim::h5 {

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

}  // namespace dgq::sim::h5

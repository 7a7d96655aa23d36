// Copying a run group between results files by plain reads and writes (merge, add_runs),
// and the visited-object guard shared with the comparison of run groups.
#include <set>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "results/run_groups.hpp"

namespace dgq::sim {

using h5::Handle;

void VisitedObjects::enter(hid_t object, const std::string& where) {
  H5O_info_t info;
  h5::check_status(H5Oget_info(object, &info), where);
  if (!seen_.insert(info.addr).second)
    throw InputError(where + ": object reached twice (hard-link cycle or shared object; a run must be a tree)");
  if (seen_.size() > kMaxObjects) throw InputError(where + ": more than " + std::to_string(kMaxObjects) + " objects");
}

void require_hard_link(hid_t parent, const std::string& name, const std::string& where) {
  H5L_info_t info;
  h5::check_status(H5Lget_info(parent, name.c_str(), &info, H5P_DEFAULT), where);
  if (info.type != H5L_TYPE_HARD) throw InputError(where + ": is a soft or external link (a run holds none)");
}

namespace {

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

bool is_variable_length(hid_t type) {
  return H5Tis_variable_str(type) > 0 || H5Tdetect_class(type, H5T_VLEN) > 0 ||
         H5Tdetect_class(type, H5T_REFERENCE) > 0;
}

void copy_attributes(hid_t src, hid_t dst, const std::string& where, const std::set<std::string>& skip = {}) {
  std::vector<std::string> names;
  hsize_t index = 0;
  h5::check_status(H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &index, collect_attribute_name, &names), where);
  for (const std::string& name : names) {
    if (skip.count(name)) continue;
    const std::string at = where + ": attribute '" + name + "'";
    Handle attr(h5::check(H5Aopen(src, name.c_str(), H5P_DEFAULT), at), Handle::Kind::attribute);
    Handle type(h5::check(H5Aget_type(attr.get()), at), Handle::Kind::datatype);
    Handle space(h5::check(H5Aget_space(attr.get()), at), Handle::Kind::dataspace);
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    if (H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) > 0 && points == 1) {
      h5::write_string_attribute(dst, name, h5::read_string_attribute(src, name, where));
      continue;
    }
    if (is_variable_length(type.get())) throw InputError(at + ": unsupported variable-length type");
    const std::size_t size = H5Tget_size(type.get());
    const std::uint64_t stored = H5Aget_storage_size(attr.get());
    if (points < 0 || size == 0 || static_cast<std::uint64_t>(points) * size > stored)
      throw InputError(at + ": " + std::to_string(points) + " values claimed but " + std::to_string(stored) +
                       " bytes stored (corrupt?)");
    std::vector<unsigned char> bytes(static_cast<std::size_t>(points) * size);
    if (!bytes.empty()) h5::check_status(H5Aread(attr.get(), type.get(), bytes.data()), at + ": cannot read");
    Handle out(h5::check(H5Acreate2(dst, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), at),
               Handle::Kind::attribute);
    if (!bytes.empty()) h5::check_status(H5Awrite(out.get(), type.get(), bytes.data()), at + ": cannot write");
  }
}

void copy_dataset(hid_t src_parent, hid_t src, hid_t dst_parent, const std::string& name, const std::string& where) {
  Handle type(h5::check(H5Dget_type(src), where), Handle::Kind::datatype);
  if (H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) > 0) {
    h5::write_string_dataset(dst_parent, name, h5::read_string_dataset(src_parent, name, where), where);
  } else {
    if (is_variable_length(type.get())) throw InputError(where + ": unsupported variable-length type");
    const std::uint64_t points = h5::check_stored_extent(src, where);
    Handle space(h5::check(H5Dget_space(src), where), Handle::Kind::dataspace);
    Handle dcpl(h5::check(H5Dget_create_plist(src), where), Handle::Kind::plist);
    // A dataset's timestamps are not part of its creation property list as read back: without
    // this, every merge would stamp the copy with the time of the merge, and two merges of the
    // same shards would differ in those bytes (the cluster test compares them with cmp).
    h5::check_status(H5Pset_obj_track_times(dcpl.get(), false), where);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(points) * H5Tget_size(type.get()));
    if (!bytes.empty())
      h5::check_status(H5Dread(src, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
                       where + ": read failed (file truncated or corrupt?)");
    Handle out(
        h5::check(H5Dcreate2(dst_parent, name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                  where + ": cannot create dataset"),
        Handle::Kind::dataset);
    if (!bytes.empty())
      h5::check_status(H5Dwrite(out.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
                       where + ": write failed");
  }
  Handle copied(h5::check(H5Dopen2(dst_parent, name.c_str(), H5P_DEFAULT), where), Handle::Kind::dataset);
  copy_attributes(src, copied.get(), where);
}

void copy_group(hid_t src, hid_t dst, const std::string& where, VisitedObjects& seen, const DiffSkip& skip = {}) {
  copy_attributes(src, dst, where, skip.attributes);
  for (const std::string& name : child_names(src, where)) {
    if (skip.members.count(name)) continue;
    const std::string child = where + "/" + name;
    require_hard_link(src, name, child);
    Handle object(h5::check(H5Oopen(src, name.c_str(), H5P_DEFAULT), child), Handle::Kind::object);
    seen.enter(object.get(), child);
    switch (H5Iget_type(object.get())) {
      case H5I_GROUP: {
        Handle sub = h5::create_group(dst, name, child);
        copy_group(object.get(), sub.get(), child, seen);
        break;
      }
      case H5I_DATASET: copy_dataset(src, object.get(), dst, name, child); break;
      default: throw InputError(child + ": unsupported kind of object (a run holds groups and datasets)");
    }
  }
}

}  // namespace

void copy_run_group(hid_t src_runs, hid_t dst_runs, const std::string& name, const std::string& context,
                    const std::string& dst_name) {
  const std::string where = context + ": /runs/" + name;
  require_hard_link(src_runs, name, where);
  Handle src = h5::open_group(src_runs, name, context);
  VisitedObjects seen;
  seen.enter(src.get(), where);
  Handle dst = h5::create_group(dst_runs, dst_name.empty() ? name : dst_name, where);
  copy_group(src.get(), dst.get(), where, seen);
}

void copy_group_except(hid_t src, hid_t dst, const std::string& where, const DiffSkip& skip) {
  VisitedObjects seen;
  seen.enter(src, where);
  copy_group(src, dst, where, seen, skip);
}

}  // namespace dgq::sim
